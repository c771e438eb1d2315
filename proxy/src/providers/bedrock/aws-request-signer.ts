import aws4 from 'aws4';
import type { Authorize } from '../batch-api-client.js';
import type { BedrockCredentials } from './bedrock-signer.js';

/**
 * SigV4 for the calls of a provider-run batch (bedrock-batches.ts), by `aws4` as the runtime's
 * signer is: Bedrock's control plane (service `bedrock`) and S3 (service `s3`, whose path is
 * signed as it is sent and whose body hash travels as `x-amz-content-sha256`). Only the headers
 * the signature adds are given back; the request carries the rest as signed.
 */
export function awsAuthorize(credentials: BedrockCredentials, region: string, service: 'bedrock' | 's3', host: string): Authorize {
  return (method, path, body, headers) => {
    const signed = aws4.sign({ host, method, path, service, region, headers: { ...headers }, ...(body === undefined ? {} : { body }) }, credentials).headers as Record<string, string | undefined>;
    const out: Record<string, string> = { authorization: String(signed.Authorization), 'x-amz-date': String(signed['X-Amz-Date']) };
    const sha = signed['X-Amz-Content-Sha256'];
    if (sha !== undefined) out['x-amz-content-sha256'] = sha;
    const token = signed['X-Amz-Security-Token'];
    if (token !== undefined) out['x-amz-security-token'] = token;
    return out;
  };
}
