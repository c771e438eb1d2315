import { generateKeyPairSync } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { importSPKI, jwtVerify } from 'jose';

/**
 * Vertex AI's batch prediction as Google documents it ("Get batch predictions for Gemini",
 * "Batch predictions with Anthropic Claude models", the BatchPredictionJob REST reference), with
 * the Cloud Storage JSON API it reads and writes and the OAuth 2.0 token endpoint of a service
 * account, on one loopback server:
 * - `POST /token`: a JWT-bearer assertion signed with the key file's private key (checked),
 *   answered with an access token every other call must carry;
 * - `POST /upload/storage/v1/b/{bucket}/o?uploadType=media&name=…`, `GET /storage/v1/b/{bucket}/o?prefix=…`
 *   (`{items: [{name}]}`), `GET /storage/v1/b/{bucket}/o/{name}?alt=media` (a missing one 404);
 * - `POST /v1/projects/{project}/locations/{location}/batchPredictionJobs` `{displayName, model:
 *   publishers/{google|anthropic}/models/{id}, inputConfig: {instancesFormat: jsonl, gcsSource:
 *   {uris}}, outputConfig: {predictionsFormat: jsonl, gcsDestination: {outputUriPrefix}}}`: every
 *   input line must be `{request}` (Claude's with `anthropic_version: vertex-2023-10-16`, no
 *   `model`, a `max_tokens`; Gemini's with `contents`), else 400 INVALID_ARGUMENT;
 * - `GET /v1/{job}`: JOB_STATE_PENDING until the test releases the job, then JOB_STATE_SUCCEEDED
 *   with `outputInfo.gcsOutputDirectory`, under which `predictions.jsonl` holds `{custom_id,
 *   request, response, status}` lines in reverse order. A Gemini line's output keeps no custom_id
 *   (only the request, its labels included), as the output of a Gemini job is only documented to;
 * - `POST /v1/{job}:cancel`: JOB_STATE_CANCELLING, then JOB_STATE_CANCELLED at the next read.
 */
export interface MockInputLine {
  custom_id?: string;
  request: Record<string, any>;
}

export interface MockPredictionJob {
  name: string;
  displayName: string;
  model: string;
  lines: MockInputLine[];
  state: 'JOB_STATE_PENDING' | 'JOB_STATE_SUCCEEDED' | 'JOB_STATE_CANCELLING' | 'JOB_STATE_CANCELLED';
  cancelled: boolean;
  outputPrefix: string;
  outputDirectory: string | null;
}

/** A line's prediction: the online method's answer, or the words of its failure. */
export type PredictionAnswer = (line: MockInputLine, model: string) => { response: unknown } | { status: string };

export interface VertexBatchMock {
  baseUrl: string;
  keyFile: string;
  jobs: MockPredictionJob[];
  objects: Map<string, Buffer>;
  release(name?: string): void;
  close(): Promise<void>;
}

const SERVICE_ACCOUNT = 'batch-runner@gateway-test-project.iam.gserviceaccount.com';
const PROJECT_NUMBER = '918273645012';

export async function startVertexBatchMock(dir: string, location: string, answer: PredictionAnswer): Promise<VertexBatchMock> {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const spki = await importSPKI(publicKey.export({ type: 'spki', format: 'pem' }) as string, 'RS256');
  const tokens = new Set<string>();
  const jobs: MockPredictionJob[] = [];
  const objects = new Map<string, Buffer>();
  let next = 0;
  let baseUrl = '';
  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8' });
    res.end(JSON.stringify(body));
  };
  const googleError = (res: ServerResponse, status: number, code: string, message: string) => json(res, status, { error: { code: status, message, status: code } });
  const gcsPath = (uri: string): string | null => (uri.startsWith('gs://') ? uri.slice(5) : null);
  const end = (job: MockPredictionJob) => {
    job.outputDirectory = `${job.outputPrefix}prediction-model-2026-12-03T00:00:00.000000Z`;
    const out = [...job.lines].reverse().map((line) => {
      const result = answer(line, job.model);
      const copy = job.model.startsWith('publishers/google/') ? { request: line.request } : { custom_id: line.custom_id, request: line.request };
      return JSON.stringify('response' in result ? { ...copy, response: result.response, status: '' } : { ...copy, status: result.status });
    });
    objects.set(`${gcsPath(job.outputDirectory)}/predictions.jsonl`, Buffer.from(`${out.join('\n')}\n`));
    job.state = 'JOB_STATE_SUCCEEDED';
  };
  const object = (job: MockPredictionJob) => ({
    name: job.name,
    displayName: job.displayName,
    model: job.model,
    state: job.state,
    ...(job.outputDirectory === null ? {} : { outputInfo: { gcsOutputDirectory: job.outputDirectory } }),
  });

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      void (async () => {
        const raw = Buffer.concat(parts);
        const url = new URL(req.url ?? '/', 'http://mock');
        if (url.pathname === '/token' && req.method === 'POST') {
          const assertion = new URLSearchParams(raw.toString('utf8')).get('assertion') ?? '';
          try {
            await jwtVerify(assertion, spki, { algorithms: ['RS256'], issuer: SERVICE_ACCOUNT, audience: 'https://oauth2.googleapis.com/token' });
          } catch {
            return json(res, 400, { error: 'invalid_grant', error_description: 'Invalid JWT Signature.' });
          }
          const token = `ya29.batch-${tokens.size + 1}`;
          tokens.add(token);
          return json(res, 200, { access_token: token, expires_in: 3600, token_type: 'Bearer' });
        }
        const bearer = /^Bearer (\S+)$/.exec(String(req.headers.authorization ?? ''))?.[1];
        if (bearer === undefined || !tokens.has(bearer)) return googleError(res, 401, 'UNAUTHENTICATED', 'Request had invalid authentication credentials. Expected OAuth 2 access token.');

        const upload = /^\/upload\/storage\/v1\/b\/([^/]+)\/o$/.exec(url.pathname);
        if (upload !== null && req.method === 'POST') {
          const name = url.searchParams.get('name');
          if (url.searchParams.get('uploadType') !== 'media' || name === null) return googleError(res, 400, 'INVALID_ARGUMENT', 'uploadType=media and name are required');
          objects.set(`${decodeURIComponent(upload[1]!)}/${name}`, raw);
          return json(res, 200, { kind: 'storage#object', bucket: decodeURIComponent(upload[1]!), name, size: String(raw.length) });
        }
        const listing = /^\/storage\/v1\/b\/([^/]+)\/o$/.exec(url.pathname);
        if (listing !== null && req.method === 'GET') {
          const bucket = decodeURIComponent(listing[1]!);
          const prefix = url.searchParams.get('prefix') ?? '';
          const items = [...objects.keys()].filter((k) => k.startsWith(`${bucket}/${prefix}`)).map((k) => ({ name: k.slice(bucket.length + 1) }));
          return json(res, 200, { kind: 'storage#objects', ...(items.length === 0 ? {} : { items }) });
        }
        const read = /^\/storage\/v1\/b\/([^/]+)\/o\/(.+)$/.exec(url.pathname);
        if (read !== null && req.method === 'GET') {
          const found = objects.get(`${decodeURIComponent(read[1]!)}/${decodeURIComponent(read[2]!)}`);
          if (found === undefined || url.searchParams.get('alt') !== 'media') return googleError(res, 404, 'NOT_FOUND', 'No such object.');
          res.writeHead(200, { 'content-type': 'application/octet-stream' });
          return res.end(found);
        }

        const create = /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/batchPredictionJobs$/.exec(url.pathname);
        if (create !== null && req.method === 'POST') {
          if (create[2] !== location) return googleError(res, 400, 'INVALID_ARGUMENT', `location ${create[2]} is not this endpoint's`);
          const body = JSON.parse(raw.toString('utf8')) as Record<string, any>;
          const model = String(body.model ?? '');
          if (!/^publishers\/(google|anthropic)\/models\/[^/]+$/.test(model)) return googleError(res, 400, 'INVALID_ARGUMENT', 'model: must be publishers/{publisher}/models/{model}');
          if (typeof body.displayName !== 'string' || body.displayName === '') return googleError(res, 400, 'INVALID_ARGUMENT', 'displayName is required');
          const source = body.inputConfig?.gcsSource?.uris?.[0];
          const input = typeof source === 'string' ? objects.get(gcsPath(source) ?? '') : undefined;
          const prefix = body.outputConfig?.gcsDestination?.outputUriPrefix;
          if (body.inputConfig?.instancesFormat !== 'jsonl' || input === undefined) return googleError(res, 400, 'INVALID_ARGUMENT', 'inputConfig: a jsonl gcsSource that exists is required');
          if (body.outputConfig?.predictionsFormat !== 'jsonl' || typeof prefix !== 'string' || gcsPath(prefix) === null) return googleError(res, 400, 'INVALID_ARGUMENT', 'outputConfig: a jsonl gcsDestination is required');
          const lines = input
            .toString('utf8')
            .split('\n')
            .filter((l) => l !== '')
            .map((l) => JSON.parse(l) as MockInputLine);
          for (const [i, line] of lines.entries()) {
            const request = line.request;
            if (request === null || typeof request !== 'object') return googleError(res, 400, 'INVALID_ARGUMENT', `line ${i + 1}: request is required`);
            if (model.startsWith('publishers/anthropic/')) {
              if (request.anthropic_version !== 'vertex-2023-10-16' || 'model' in request || typeof request.max_tokens !== 'number' || request.stream === true) return googleError(res, 400, 'INVALID_ARGUMENT', `line ${i + 1}: not a Claude request for Vertex AI`);
            } else if (!Array.isArray(request.contents)) return googleError(res, 400, 'INVALID_ARGUMENT', `line ${i + 1}: contents is required`);
          }
          const job: MockPredictionJob = {
            name: `projects/${PROJECT_NUMBER}/locations/${location}/batchPredictionJobs/${(++next + 1000).toString()}`,
            displayName: body.displayName,
            model,
            lines,
            state: 'JOB_STATE_PENDING',
            cancelled: false,
            outputPrefix: prefix,
            outputDirectory: null,
          };
          jobs.push(job);
          return json(res, 200, object(job));
        }
        const match = /^\/v1\/(projects\/[^/]+\/locations\/[^/]+\/batchPredictionJobs\/[^/:]+)(:cancel)?$/.exec(url.pathname);
        const job = match === null ? undefined : jobs.find((j) => j.name === match[1]);
        if (match === null || job === undefined) return googleError(res, 404, 'NOT_FOUND', `Invalid path ${url.pathname}`);
        if (match[2] === ':cancel' && req.method === 'POST') {
          if (job.state !== 'JOB_STATE_PENDING') return googleError(res, 400, 'FAILED_PRECONDITION', 'the job has ended');
          job.state = 'JOB_STATE_CANCELLING';
          job.cancelled = true;
          return json(res, 200, {});
        }
        if (match[2] === undefined && req.method === 'GET') {
          const seen = object(job);
          if (job.state === 'JOB_STATE_CANCELLING') job.state = 'JOB_STATE_CANCELLED';
          return json(res, 200, seen);
        }
        googleError(res, 404, 'NOT_FOUND', 'no such route');
      })().catch((err: unknown) => googleError(res, 500, 'INTERNAL', String(err)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const keyFile = `${dir}/vertex-batch-service-account.json`;
  writeFileSync(
    keyFile,
    JSON.stringify({
      type: 'service_account',
      project_id: 'gateway-test-project',
      private_key_id: 'batch-key-1',
      private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }),
      client_email: SERVICE_ACCOUNT,
      client_id: '100000000000000000002',
      token_uri: `${baseUrl}/token`,
    }),
  );
  return {
    baseUrl,
    keyFile,
    jobs,
    objects,
    release(only?: string) {
      for (const job of jobs) if ((only === undefined || job.name === only) && job.state === 'JOB_STATE_PENDING') end(job);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
