import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Hash } from '@smithy/hash-node';
import { SignatureV4 } from '@smithy/signature-v4';

/**
 * Amazon Bedrock's batch inference as AWS documents it ("Process multiple prompts with batch
 * inference", the CreateModelInvocationJob / GetModelInvocationJob / StopModelInvocationJob API
 * reference), with the S3 it reads and writes, on one loopback server:
 * - S3 by path (`PUT` / `GET /{bucket}/{key}`, a missing object 404 `NoSuchKey`);
 * - `POST /model-invocation-job` `{jobName, roleArn, modelId, modelInvocationType, inputDataConfig:
 *   {s3InputDataConfig: {s3Uri}}, outputDataConfig: {s3OutputDataConfig: {s3Uri}},
 *   clientRequestToken?}`: the input object must exist and hold at least `minRecords` records of
 *   `{recordId, modelInput}` (else 400 ValidationException); the same clientRequestToken gives
 *   back the same job; answers `{jobArn}`;
 * - `GET /model-invocation-job/{arn}`: `status` Submitted until the test releases the job, then
 *   Completed, its output written to `{output s3Uri}{job id}/{input name}.out` as `{recordId,
 *   modelInput, modelOutput}` or `{recordId, modelInput, error: {errorCode, errorMessage}}`;
 * - `POST /model-invocation-job/{arn}/stop`: Stopping, then Stopped at the next read, no output;
 * - `POST /model/{id}/converse`: the runtime, for lines the gateway runs itself.
 * Every request's SigV4 signature is recomputed with the Smithy signer (service `bedrock`, or `s3`
 * with its `x-amz-content-sha256` checked against the body); a wrong one is a 403.
 */
export interface BedrockBatchCredentials {
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
}

export interface MockRecord {
  recordId: string;
  modelInput: Record<string, any>;
}

export interface MockJob {
  jobArn: string;
  jobName: string;
  modelId: string;
  roleArn: string;
  modelInvocationType: string;
  records: MockRecord[];
  status: 'Submitted' | 'Stopping' | 'Stopped' | 'Completed';
  stopped: boolean;
  token: string | null;
  /** The input object's and the output prefix's s3:// URIs. */
  input: string;
  output: string;
}

/** A record's answer: a Converse response, or an error. */
export type RecordAnswer = (record: MockRecord, modelId: string) => { modelOutput: unknown } | { error: { errorCode: number; errorMessage: string } };

export interface BedrockBatchMock {
  baseUrl: string;
  jobs: MockJob[];
  objects: Map<string, Buffer>;
  /** Converse calls the runtime answered (lines the gateway ran). */
  converse: { modelId: string; body: Record<string, any> }[];
  release(arn?: string): void;
  close(): Promise<void>;
}

const JOB_NAME = /^[a-zA-Z0-9]{1,63}(-*[a-zA-Z0-9+\-.]){0,63}$/;

export async function startBedrockBatchMock(creds: BedrockBatchCredentials, answer: RecordAnswer, minRecords = 100): Promise<BedrockBatchMock> {
  const jobs: MockJob[] = [];
  const objects = new Map<string, Buffer>();
  const converse: BedrockBatchMock['converse'] = [];
  const signers = {
    bedrock: new SignatureV4({ credentials: creds, region: creds.region, service: 'bedrock', sha256: Hash.bind(null, 'sha256'), uriEscapePath: true, applyChecksum: false }),
    s3: new SignatureV4({ credentials: creds, region: creds.region, service: 's3', sha256: Hash.bind(null, 'sha256'), uriEscapePath: false, applyChecksum: false }),
  };
  let next = 0;
  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const awsError = (res: ServerResponse, status: number, type: string, message: string) => {
    res.writeHead(status, { 'content-type': 'application/json', 'x-amzn-errortype': type });
    res.end(JSON.stringify({ message }));
  };
  const s3Key = (uri: string): string | null => (uri.startsWith('s3://') ? uri.slice(5) : null);
  const end = (job: MockJob) => {
    const output = s3Key(job.output)!;
    const name = job.input.slice(job.input.lastIndexOf('/') + 1);
    const jobId = job.jobArn.slice(job.jobArn.lastIndexOf('/') + 1);
    const lines = job.records.map((r) => JSON.stringify({ recordId: r.recordId, modelInput: r.modelInput, ...answer(r, job.modelId) }));
    objects.set(`${output}${jobId}/${name}.out`, Buffer.from(`${lines.join('\n')}\n`));
    objects.set(`${output}${jobId}/manifest.json.out`, Buffer.from(JSON.stringify({ totalRecordCount: job.records.length, processedRecordCount: job.records.length })));
    job.status = 'Completed';
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      void (async () => {
        const raw = Buffer.concat(parts);
        const path = req.url ?? '/';
        const service = path.startsWith('/model-invocation-job') || path.startsWith('/model/') ? 'bedrock' : 's3';
        const problem = await signatureProblem(req, raw, creds, service, signers[service]);
        if (problem !== null) return awsError(res, 403, service === 's3' ? 'SignatureDoesNotMatch' : 'UnrecognizedClientException', problem);
        if (service === 's3') {
          const key = decodeURIComponent(path.slice(1));
          if (req.method === 'PUT') {
            objects.set(key, raw);
            res.writeHead(200, { etag: `"${createHash('md5').update(raw).digest('hex')}"` });
            return res.end();
          }
          const object = objects.get(key);
          if (req.method !== 'GET' || object === undefined) {
            res.writeHead(404, { 'content-type': 'application/xml' });
            return res.end('<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message></Error>');
          }
          res.writeHead(200, { 'content-type': 'application/octet-stream' });
          return res.end(object);
        }
        const body = raw.length === 0 ? {} : (JSON.parse(raw.toString('utf8')) as Record<string, any>);
        const runtime = /^\/model\/([^/]+)\/converse$/.exec(path);
        if (runtime !== null && req.method === 'POST') {
          const modelId = decodeURIComponent(runtime[1]!);
          converse.push({ modelId, body });
          const out = answer({ recordId: 'runtime', modelInput: body }, modelId);
          if ('error' in out) return awsError(res, out.error.errorCode, 'ValidationException', out.error.errorMessage);
          return json(res, 200, out.modelOutput);
        }
        if (path === '/model-invocation-job' && req.method === 'POST') {
          const same = jobs.find((j) => j.token !== null && j.token === body.clientRequestToken);
          if (same !== undefined) return json(res, 200, { jobArn: same.jobArn });
          if (typeof body.jobName !== 'string' || !JOB_NAME.test(body.jobName)) return awsError(res, 400, 'ValidationException', 'jobName: does not match the pattern');
          if (typeof body.roleArn !== 'string' || !/^arn:aws:iam::\d{12}:role\/.+$/.test(body.roleArn)) return awsError(res, 400, 'ValidationException', 'roleArn: invalid');
          if (typeof body.modelId !== 'string' || body.modelId === '') return awsError(res, 400, 'ValidationException', 'modelId: required');
          const input = body.inputDataConfig?.s3InputDataConfig?.s3Uri;
          const output = body.outputDataConfig?.s3OutputDataConfig?.s3Uri;
          const object = typeof input === 'string' ? objects.get(s3Key(input) ?? '') : undefined;
          if (object === undefined || typeof output !== 'string' || s3Key(output) === null) return awsError(res, 400, 'ValidationException', 'inputDataConfig: no such S3 object, or outputDataConfig missing');
          const records = object
            .toString('utf8')
            .split('\n')
            .filter((l) => l !== '')
            .map((l) => JSON.parse(l) as MockRecord);
          if (records.length < minRecords) return awsError(res, 400, 'ValidationException', `The number of records in the input is below the minimum of ${minRecords} for batch inference.`);
          const jobArn = `arn:aws:bedrock:${creds.region}:123456789012:model-invocation-job/mockjob${(++next).toString().padStart(6, '0')}`;
          const job: MockJob = { jobArn, jobName: body.jobName, modelId: body.modelId, roleArn: body.roleArn, modelInvocationType: String(body.modelInvocationType ?? 'InvokeModel'), records, status: 'Submitted', stopped: false, token: typeof body.clientRequestToken === 'string' ? body.clientRequestToken : null, input, output };
          jobs.push(job);
          return json(res, 200, { jobArn });
        }
        const match = /^\/model-invocation-job\/([^/]+)(\/stop)?$/.exec(path);
        const job = match === null ? undefined : jobs.find((j) => j.jobArn === decodeURIComponent(match[1]!));
        if (match === null || job === undefined) return awsError(res, 404, 'ResourceNotFoundException', 'no such job');
        if (match[2] === '/stop' && req.method === 'POST') {
          if (job.status === 'Completed' || job.status === 'Stopped') return awsError(res, 400, 'ValidationException', 'the job has ended');
          job.status = 'Stopping';
          job.stopped = true;
          return json(res, 200, {});
        }
        if (match[2] === undefined && req.method === 'GET') {
          const seen = { jobArn: job.jobArn, jobName: job.jobName, modelId: job.modelId, roleArn: job.roleArn, status: job.status };
          if (job.status === 'Stopping') job.status = 'Stopped';
          return json(res, 200, seen);
        }
        awsError(res, 404, 'UnknownOperationException', 'no such route');
      })().catch((err: unknown) => awsError(res, 500, 'InternalServerException', String(err)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    jobs,
    objects,
    converse,
    release(only?: string) {
      for (const job of jobs) if ((only === undefined || job.jobArn === only) && job.status === 'Submitted') end(job);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Recomputes the request's signature for `service`; null when it is right, else AWS's complaint. */
async function signatureProblem(req: IncomingMessage, raw: Buffer, creds: BedrockBatchCredentials, service: 'bedrock' | 's3', signer: SignatureV4): Promise<string | null> {
  const auth = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/.exec(String(req.headers.authorization ?? ''));
  if (auth === null) return 'Authorization header requires Credential, SignedHeaders and Signature.';
  const [, keyId, , region, scoped, signedList, signature] = auth;
  if (keyId !== creds.accessKeyId) return 'The security token included in the request is invalid.';
  if (region !== creds.region || scoped !== service) return `Credential should be scoped to a valid region and service ${service}.`;
  if (service === 's3' && req.headers['x-amz-content-sha256'] !== createHash('sha256').update(raw).digest('hex')) return 'The provided x-amz-content-sha256 header does not match what was computed.';
  const date = String(req.headers['x-amz-date'] ?? '');
  if (!/^\d{8}T\d{6}Z$/.test(date)) return 'Missing x-amz-date.';
  const names = (signedList as string).split(';');
  if (!names.includes('host')) return 'host must be signed.';
  const headers: Record<string, string> = {};
  for (const name of names) {
    const value = req.headers[name];
    if (value === undefined) return `Signed header ${name} is missing.`;
    headers[name] = Array.isArray(value) ? value.join(',') : value;
  }
  const [host, port] = String(req.headers.host ?? '').split(':');
  const signingDate = new Date(`${date.slice(0, 4)}-${date.slice(4, 6)}-${date.slice(6, 8)}T${date.slice(9, 11)}:${date.slice(11, 13)}:${date.slice(13, 15)}Z`);
  const expected = await signer.sign(
    { method: req.method ?? 'GET', protocol: 'http:', hostname: host ?? '', ...(port === undefined ? {} : { port: Number(port) }), path: req.url ?? '/', query: {}, headers, body: raw },
    { signingDate, unsignableHeaders: new Set(Object.keys(req.headers).filter((h) => !names.includes(h))) },
  );
  const computed = /Signature=([0-9a-f]{64})/.exec(String(expected.headers.authorization))?.[1];
  return computed === signature ? null : 'The request signature we calculated does not match the signature you provided.';
}
