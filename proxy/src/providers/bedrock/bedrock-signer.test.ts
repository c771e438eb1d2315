import { Hash } from '@smithy/hash-node';
import { SignatureV4 } from '@smithy/signature-v4';
import { describe, expect, it } from 'vitest';
import { BedrockSigner, type BedrockCredentials } from './bedrock-signer.js';

/**
 * The signer against the AWS SDKs' own (Smithy's SignatureV4, uriEscapePath as for every service
 * but S3): the same request signed at the same instant must carry the same Authorization, for
 * model ids and inference-profile ARNs, with and without a session token, across days (the signing
 * key is kept per day) and on a base URL with a port and a path prefix.
 */
const SECRET = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';

async function reference(url: URL, region: string, creds: BedrockCredentials, path: string, body: Buffer, headers: Record<string, string>, at: number): Promise<string> {
  const smithy = new SignatureV4({ credentials: creds, region, service: 'bedrock', sha256: Hash.bind(null, 'sha256'), uriEscapePath: true, applyChecksum: false });
  const signed = await smithy.sign(
    {
      method: 'POST',
      protocol: url.protocol,
      hostname: url.hostname,
      ...(url.port === '' ? {} : { port: Number(url.port) }),
      path,
      query: {},
      headers: { ...headers, host: url.host, 'content-length': String(body.length) },
      body,
    },
    { signingDate: new Date(at) },
  );
  return String(signed.headers.authorization);
}

const PATHS = [
  '/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse',
  `/model/${encodeURIComponent('arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-3-7-sonnet-20250219-v1:0')}/converse-stream`,
  `/prefix/model/${encodeURIComponent("odd!'()*~ name")}/converse`,
];

describe('BedrockSigner', () => {
  for (const token of [undefined, 'FwoGZXIvYXdzEXAMPLE-session-token']) {
    it(`signs as the Smithy signer does ${token === undefined ? 'without' : 'with'} a session token`, async () => {
      const url = new URL('http://127.0.0.1:4566/prefix');
      const creds: BedrockCredentials = token === undefined ? { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: SECRET } : { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: SECRET, sessionToken: token };
      const signer = new BedrockSigner(url, 'eu-west-3', creds);
      // Two instants on different days, and a second instant of the same day: the key and the date are cached.
      const instants = [Date.UTC(2026, 10, 26, 23, 59, 59, 500), Date.UTC(2026, 10, 27, 0, 0, 1), Date.UTC(2026, 10, 27, 13, 5, 42, 999)];
      for (const at of instants) {
        for (const path of PATHS) {
          const body = Buffer.from(JSON.stringify({ messages: [{ role: 'user', content: [{ text: `héllo ${path}` }] }] }));
          const headers = signer.sign(path, body, at);
          expect(headers['x-amz-date']).toBe(new Date(at).toISOString().replace(/[:-]|\.\d{3}/g, ''));
          expect(headers['x-amz-security-token']).toBe(token);
          const sent: Record<string, string> = { 'content-type': headers['content-type'] as string, 'x-amz-date': headers['x-amz-date'] as string };
          if (token !== undefined) sent['x-amz-security-token'] = token;
          expect(headers.authorization).toBe(await reference(url, 'eu-west-3', creds, path, body, sent, at));
        }
      }
    });
  }

  it('gives a different signature for a different body, path or secret', () => {
    const url = new URL('https://bedrock-runtime.us-east-1.amazonaws.com');
    const at = Date.UTC(2026, 0, 2, 3, 4, 5);
    const signer = new BedrockSigner(url, 'us-east-1', { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: SECRET });
    const other = new BedrockSigner(url, 'us-east-1', { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: `${SECRET}x` });
    const body = Buffer.from('{"messages":[]}');
    const base = signer.sign(PATHS[0] as string, body, at).authorization;
    expect(signer.sign(PATHS[0] as string, Buffer.from('{"messages":[{}]}'), at).authorization).not.toBe(base);
    expect(signer.sign(PATHS[1] as string, body, at).authorization).not.toBe(base);
    expect(other.sign(PATHS[0] as string, body, at).authorization).not.toBe(base);
  });
});
