import { generateKeyPairSync } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { request as httpRequest, type ServerResponse } from 'node:http';
import { importSPKI, jwtVerify, decodeProtectedHeader } from 'jose';
import { sendJson, startWireMock, type RunningWireMock, type WireRequest } from '../../../test-support/wire-mock.js';
import { startAnthropicWireMock } from './anthropic-wire-mock.js';
import { startGeminiWireMock } from './gemini-wire-mock.js';

/**
 * Google Vertex AI as its reference documents it, with its OAuth 2.0 token endpoint:
 *
 * - the token endpoint (a server of its own, as `token_uri` is another host) takes the JWT-bearer
 *   grant, checks the assertion's RS256 signature against the service account's public key, its
 *   `iss`, `aud` and cloud-platform scope, and issues an opaque access token that lives
 *   `tokenLifetimeSeconds` (short in tests, so that refresh is exercised);
 * - the API refuses (401 UNAUTHENTICATED, Google's error body) a request whose bearer token it did
 *   not issue or that has expired, then serves
 *   `/v1/projects/{project}/locations/{location}/publishers/google/models/{model}:generateContent`
 *   and `:streamGenerateContent?alt=sse` as the Gemini API does (the gemini wire mock answers), and
 *   `…/publishers/anthropic/models/{model}:rawPredict` and `:streamRawPredict` as Anthropic does
 *   (the anthropic wire mock answers), once it has checked what Vertex differs in: no `model` in
 *   the body, `anthropic_version: vertex-2023-10-16` in it;
 * - `…/publishers/google/models/{model}:predict` as the text embeddings API: `{instances:
 *   [{content}], parameters?: {outputDimensionality}}`, at most 250 instances (one for
 *   `gemini-embedding-*` models, an instance's `task_type` one of Google's), answered `{predictions: [{embeddings: {values, statistics:
 *   {token_count, truncated}}}]}`; instance i's vector is `(i + 1) × (k + 1) / 16` for k below
 *   the dimensions (VERTEX_EMBEDDING_DIMENSIONS by default) and its token count its word count.
 *   A model named `predict-429` answers 429 RESOURCE_EXHAUSTED.
 * - a Gemini model named `gemini-denied` answers 403 PERMISSION_DENIED, naming the project, its
 *   number and the service account as Google does (VERTEX_PERMISSION_DENIED).
 */
export interface VertexWireMock extends RunningWireMock {
  /** Where the service account key file was written (its token_uri points at this mock). */
  keyFile: string;
  /** Access tokens issued so far. */
  issued(): number;
  /** The most recently issued token. */
  lastToken(): string | null;
  /** Requests refused for a missing, unknown or expired token. */
  refused(): number;
  /** Lifetime of the tokens issued from now on. */
  setTokenLifetime(seconds: number): void;
  /** The next token requests fail with this status (0: answer normally). */
  failTokens(status: number): void;
}

export const VERTEX_PROJECT = 'gateway-test-project';
export const VERTEX_EMBEDDING_DIMENSIONS = 6;
export const VERTEX_PROJECT_NUMBER = '918273645012';
const SERVICE_ACCOUNT = `gateway@${VERTEX_PROJECT}.iam.gserviceaccount.com`;
/** Google's words when the service account may not call the model (gemini-denied). */
export const VERTEX_PERMISSION_DENIED = `Permission 'aiplatform.endpoints.predict' denied on resource '//aiplatform.googleapis.com/projects/${VERTEX_PROJECT}/locations/global/publishers/google/models/gemini-denied' (or it may not exist) for ${SERVICE_ACCOUNT} in project ${VERTEX_PROJECT_NUMBER}.`;
const KEY_ID = 'b1f0e2d3c4a5968778695a4b3c2d1e0f12345678';

function googleError(res: ServerResponse, code: number, status: string, message: string, details?: unknown[]): void {
  sendJson(res, code, { error: { code, message, status, ...(details === undefined ? {} : { details }) } });
}

export async function startVertexWireMock(dir: string, options: { location: string; tokenLifetimeSeconds?: number }): Promise<VertexWireMock> {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const spki = await importSPKI(publicKey.export({ type: 'spki', format: 'pem' }) as string, 'RS256');
  let lifetime = options.tokenLifetimeSeconds ?? 3600;
  let failing = 0;
  const tokens = new Map<string, number>();
  let last: string | null = null;
  let refused = 0;

  const oauth = await startWireMock((req, res) => {
    void (async () => {
      if (req.method !== 'POST' || req.path !== '/token') return sendJson(res, 404, { error: 'not_found' });
      if (failing !== 0) return sendJson(res, failing, { error: 'internal_failure', error_description: 'token service unavailable' });
      const form = new URLSearchParams(req.raw.toString('utf8'));
      if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') return sendJson(res, 400, { error: 'unsupported_grant_type', error_description: 'Invalid grant_type' });
      const assertion = form.get('assertion') ?? '';
      try {
        if (decodeProtectedHeader(assertion).alg !== 'RS256') throw new Error('alg');
        const { payload } = await jwtVerify(assertion, spki, { algorithms: ['RS256'], issuer: SERVICE_ACCOUNT, audience: 'https://oauth2.googleapis.com/token' });
        if (!String(payload.scope ?? '').split(' ').includes('https://www.googleapis.com/auth/cloud-platform')) throw new Error('scope');
      } catch {
        return sendJson(res, 400, { error: 'invalid_grant', error_description: 'Invalid JWT Signature.' });
      }
      const token = `ya29.mock-${tokens.size + 1}-${Math.random().toString(36).slice(2)}`;
      tokens.set(token, Date.now() + lifetime * 1000);
      last = token;
      sendJson(res, 200, { access_token: token, expires_in: lifetime, token_type: 'Bearer' });
    })();
  });

  const keyFile = `${dir}/vertex-service-account.json`;
  writeFileSync(
    keyFile,
    JSON.stringify({
      type: 'service_account',
      project_id: VERTEX_PROJECT,
      private_key_id: KEY_ID,
      private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }),
      client_email: SERVICE_ACCOUNT,
      client_id: '100000000000000000001',
      auth_uri: 'https://accounts.google.com/o/oauth2/auth',
      token_uri: `${oauth.baseUrl}/token`,
    }),
  );

  const gemini = await startGeminiWireMock();
  const anthropic = await startAnthropicWireMock();
  const prefix = `/v1/projects/${VERTEX_PROJECT}/locations/${options.location}/publishers/`;

  const api = await startWireMock((req, res) => {
    const bearer = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
    const expiry = bearer === undefined ? undefined : tokens.get(bearer);
    if (expiry === undefined || Date.now() >= expiry) {
      refused++;
      return googleError(res, 401, 'UNAUTHENTICATED', 'Request had invalid authentication credentials. Expected OAuth 2 access token.');
    }
    if (req.method !== 'POST' || !req.path.startsWith(prefix)) return googleError(res, 404, 'NOT_FOUND', `Invalid path ${req.path}`);
    const match = /^(google|anthropic)\/models\/([^/:]+):(generateContent|streamGenerateContent\?alt=sse|rawPredict|streamRawPredict|predict)$/.exec(req.path.slice(prefix.length));
    if (match === null) return googleError(res, 404, 'NOT_FOUND', `Invalid path ${req.path}`);
    const [, publisher, model, method] = match as unknown as [string, string, string, string];
    if (publisher === 'google') {
      if (model === 'gemini-denied') {
        const reason = { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'IAM_PERMISSION_DENIED', domain: 'aiplatform.googleapis.com', metadata: { permission: 'aiplatform.endpoints.predict', resource: `projects/${VERTEX_PROJECT}/locations/global/publishers/google/models/gemini-denied` } };
        return googleError(res, 403, 'PERMISSION_DENIED', VERTEX_PERMISSION_DENIED, [reason]);
      }
      if (method === 'predict') return embeddings(decodeURIComponent(model), req.body, res);
      if (method !== 'generateContent' && method !== 'streamGenerateContent?alt=sse') return googleError(res, 400, 'INVALID_ARGUMENT', `${method} is not a method of Gemini models`);
      return forward(`${gemini.baseUrl}/v1beta/models/${model}:${method}`, req, req.raw, {}, res);
    }
    if (method !== 'rawPredict' && method !== 'streamRawPredict') return googleError(res, 400, 'INVALID_ARGUMENT', `${method} is not a method of Claude models`);
    const body = req.body;
    if (body.anthropic_version !== 'vertex-2023-10-16') return sendJson(res, 400, { type: 'error', error: { type: 'invalid_request_error', message: 'anthropic_version: vertex-2023-10-16 is required' } });
    if (body.model !== undefined) return sendJson(res, 400, { type: 'error', error: { type: 'invalid_request_error', message: 'model: Extra inputs are not permitted' } });
    if ((method === 'streamRawPredict') !== (body.stream === true)) return sendJson(res, 400, { type: 'error', error: { type: 'invalid_request_error', message: 'streamRawPredict needs stream: true, rawPredict none' } });
    const { anthropic_version: _version, ...rest } = body;
    return forward(`${anthropic.baseUrl}/v1/messages`, req, Buffer.from(JSON.stringify({ ...rest, model: decodeURIComponent(model) })), { 'anthropic-version': '2023-06-01' }, res);
  });

  return {
    ...api,
    keyFile,
    issued: () => tokens.size,
    lastToken: () => last,
    refused: () => refused,
    setTokenLifetime: (seconds) => {
      lifetime = seconds;
    },
    failTokens: (status) => {
      failing = status;
    },
    close: async () => {
      await Promise.all([api.close(), oauth.close(), gemini.close(), anthropic.close()]);
    },
  };
}

const TASK_TYPES = new Set(['RETRIEVAL_QUERY', 'RETRIEVAL_DOCUMENT', 'SEMANTIC_SIMILARITY', 'CLASSIFICATION', 'CLUSTERING', 'QUESTION_ANSWERING', 'FACT_VERIFICATION', 'CODE_RETRIEVAL_QUERY']);

/** The text embeddings API's `predict`, checked as Vertex checks it. */
function embeddings(model: string, body: Record<string, unknown>, res: ServerResponse): void {
  if (model === 'predict-429') return googleError(res, 429, 'RESOURCE_EXHAUSTED', 'Quota exceeded for aiplatform.googleapis.com/online_prediction_requests_per_base_model.');
  const instances = body.instances;
  if (!Array.isArray(instances) || instances.length === 0) return googleError(res, 400, 'INVALID_ARGUMENT', 'instances must be a non-empty list.');
  const limit = model.startsWith('gemini-embedding') ? 1 : 250;
  if (instances.length > limit) return googleError(res, 400, 'INVALID_ARGUMENT', `Unable to submit request because the model supports up to ${limit} instances per request, and this request has ${instances.length}.`);
  const texts: string[] = [];
  for (const instance of instances as { content?: unknown; task_type?: unknown }[]) {
    if (typeof instance?.content !== 'string') return googleError(res, 400, 'INVALID_ARGUMENT', 'Each instance needs a string content.');
    if (instance.task_type !== undefined && !TASK_TYPES.has(String(instance.task_type))) return googleError(res, 400, 'INVALID_ARGUMENT', `Unsupported task_type ${String(instance.task_type)}.`);
    texts.push(instance.content);
  }
  const parameters = (body.parameters ?? {}) as { outputDimensionality?: unknown };
  const dimensions = typeof parameters.outputDimensionality === 'number' ? parameters.outputDimensionality : VERTEX_EMBEDDING_DIMENSIONS;
  sendJson(res, 200, {
    predictions: texts.map((text, i) => ({
      embeddings: { values: Array.from({ length: dimensions }, (_, k) => ((i + 1) * (k + 1)) / 16), statistics: { token_count: text.split(/\s+/).filter(Boolean).length, truncated: false } },
    })),
    metadata: { billableCharacterCount: texts.reduce((n, t) => n + t.length, 0) },
  });
}

/** The publisher's own mock answers; its bytes go back as they come, and a client that leaves cuts it. */
function forward(url: string, req: WireRequest, body: Buffer, headers: Record<string, string>, res: ServerResponse): void {
  const upstream = httpRequest(url, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(body.length), ...headers } }, (answer) => {
    res.writeHead(answer.statusCode ?? 502, answer.headers);
    answer.pipe(res);
  });
  upstream.on('error', () => res.destroy());
  res.on('close', () => upstream.destroy());
  upstream.end(body);
  void req;
}
