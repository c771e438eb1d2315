import type { ChatRequest } from '../adapter.js';
import { BatchApiClient, type Authorize } from '../batch-api-client.js';
import { BatchApi, type BatchAnswers, type BatchLine, type ProviderBatchResult } from '../provider-batches.js';

/**
 * Vertex AI's batch prediction (`batch: native` on a vertex entry): the lines go up to Cloud
 * Storage as one JSONL object of `{custom_id, request}` (each request the body `generateContent`
 * or `rawPredict` would have been sent: Gemini's GenerateContentRequest, Claude's Messages body
 * with Vertex's `anthropic_version`), one batch prediction job is made of it for the line's model
 * (`POST {parent}/batchPredictionJobs`), polled (`GET {job}`), cancelled (`POST {job}:cancel`),
 * and the `predictions*.jsonl` objects it writes under its output directory (listed by the JSON
 * API) are read back line by line: `{custom_id, request, response, status}`, `status` empty
 * or the error. A Gemini request also carries its line's id as the label `gateway_line`, which
 * comes back in the output's copy of the request.
 */
export interface VertexBatchLines extends BatchAnswers {
  /** The model's resource (`publishers/google/models/gemini-2.5-flash`) and the body its online method takes. */
  batchLine(request: ChatRequest): { operation: string; body: Buffer };
}

export interface VertexBatchSettings {
  /** The Vertex AI endpoint and its `projects/{project}/locations/{location}`. */
  apiUrl: string;
  parent: string;
  /** `gs://bucket/prefix`: where each job's input and output go. */
  gcsUri: string;
  /** The Cloud Storage JSON API (`https://storage.googleapis.com`). */
  storageUrl: string;
  /** The service account's bearer token headers, for both APIs (the cloud-platform scope covers Cloud Storage). */
  authorize: Authorize;
}

interface JobObject {
  name?: string;
  state?: string;
  outputInfo?: { gcsOutputDirectory?: string } | null;
}

interface ObjectList {
  items?: { name?: string }[];
  nextPageToken?: string;
}

interface OutputLine {
  custom_id?: unknown;
  request?: { labels?: Record<string, unknown> } | null;
  response?: unknown;
  status?: unknown;
}

const ENDED = new Set(['JOB_STATE_SUCCEEDED', 'JOB_STATE_FAILED', 'JOB_STATE_CANCELLED', 'JOB_STATE_EXPIRED', 'JOB_STATE_PARTIALLY_SUCCEEDED']);
const LABEL = 'gateway_line';

export class VertexBatches extends BatchApi {
  private readonly storage: BatchApiClient;
  private readonly bucket: string;
  private readonly prefix: string;
  /** The path of the endpoint's API, before `/v1/…` (a base URL may carry one). */
  private readonly apiBase: string;
  private readonly storageBase: string;

  constructor(
    provider: string,
    private readonly settings: VertexBatchSettings,
    private readonly adapter: VertexBatchLines,
  ) {
    const api = new URL(settings.apiUrl);
    super(provider, api.origin, { accept: 'application/json' }, adapter, settings.authorize);
    this.apiBase = api.pathname.replace(/\/+$/, '');
    const { bucket, prefix } = parseGcsUri(provider, settings.gcsUri);
    this.bucket = bucket;
    this.prefix = prefix;
    const storage = new URL(settings.storageUrl);
    this.storageBase = storage.pathname.replace(/\/+$/, '');
    this.storage = new BatchApiClient(provider, storage.origin, {}, settings.authorize);
  }

  line(request: ChatRequest): { operation: string; body: Buffer } {
    return this.adapter.batchLine(request);
  }

  async submit(operation: string, lines: readonly BatchLine[], tag: string): Promise<string> {
    const folder = `${this.prefix}${tag}`;
    const gemini = operation.startsWith('publishers/google/');
    const parts: Buffer[] = [];
    // The bodies go in as the bytes the adapter made; a Gemini body only gains its label.
    for (const line of lines) {
      parts.push(Buffer.from(`{"custom_id":${JSON.stringify(line.customId)},"request":`), gemini ? labelled(line.body, line.customId) : line.body, Buffer.from('}\n'));
    }
    const object = `${folder}/input.jsonl`;
    await this.storage.upload('take the batch input', 'POST', `${this.storageBase}/upload/storage/v1/b/${encodeURIComponent(this.bucket)}/o?uploadType=media&name=${encodeURIComponent(object)}`, Buffer.concat(parts), 'application/jsonl');
    const job = await this.client.json<JobObject>('make the batch prediction job', 'POST', `${this.apiBase}/v1/${this.settings.parent}/batchPredictionJobs`, {
      displayName: tag,
      model: operation,
      inputConfig: { instancesFormat: 'jsonl', gcsSource: { uris: [`gs://${this.bucket}/${object}`] } },
      outputConfig: { predictionsFormat: 'jsonl', gcsDestination: { outputUriPrefix: `gs://${this.bucket}/${folder}/output/` } },
      labels: { gateway_batch: tag.toLowerCase().replace(/[^a-z0-9_-]/g, '-').slice(0, 63) },
    });
    if (typeof job.name !== 'string' || !job.name.startsWith('projects/')) throw new Error('Vertex AI made no job');
    return job.name;
  }

  async ended(id: string): Promise<boolean> {
    return ENDED.has((await this.get(id)).state ?? '');
  }

  async *results(id: string): AsyncIterable<ProviderBatchResult> {
    const job = await this.get(id);
    const directory = job.outputInfo?.gcsOutputDirectory;
    const where = typeof directory === 'string' ? parseGcsUri('', directory, false) : null;
    // A job that failed before writing anything has no output: its lines end with no result.
    if (where !== null && where.bucket === this.bucket) {
      for (const name of await this.predictionObjects(where.prefix)) {
        const path = `${this.storageBase}/storage/v1/b/${encodeURIComponent(this.bucket)}/o/${encodeURIComponent(name)}?alt=media`;
        for await (const text of this.storage.lines('send the batch output', path, 'none')) {
          const result = readResult(text);
          if (result !== null) yield result;
        }
      }
    }
    if (job.state === 'JOB_STATE_CANCELLED') yield { customId: '*', outcome: 'canceled' };
    if (job.state === 'JOB_STATE_EXPIRED') yield { customId: '*', outcome: 'expired' };
  }

  protected async cancelRunning(id: string): Promise<void> {
    await this.client.json('cancel the batch prediction job', 'POST', `${this.apiBase}/v1/${id}:cancel`, {});
  }

  override async close(): Promise<void> {
    await Promise.all([super.close(), this.storage.close()]);
  }

  private get(id: string): Promise<JobObject> {
    return this.client.json<JobObject>('say how the batch prediction job goes', 'GET', `${this.apiBase}/v1/${id}`);
  }

  /** The prediction files under the job's output directory (Vertex AI may shard them). */
  private async predictionObjects(prefix: string): Promise<string[]> {
    const names: string[] = [];
    let page: string | undefined;
    do {
      const query = `prefix=${encodeURIComponent(prefix)}&fields=items(name),nextPageToken${page === undefined ? '' : `&pageToken=${encodeURIComponent(page)}`}`;
      const list = await this.storage.json<ObjectList>('list the batch output', 'GET', `${this.storageBase}/storage/v1/b/${encodeURIComponent(this.bucket)}/o?${query}`);
      for (const item of list.items ?? []) {
        const name = item.name ?? '';
        if (/(^|\/)predictions[^/]*\.jsonl$/.test(name)) names.push(name);
      }
      page = list.nextPageToken;
    } while (page !== undefined && page !== '');
    return names.sort();
  }
}

/** The Gemini body with the line's id as a label (labels are billing metadata: the answer is the same). */
function labelled(body: Buffer, customId: string): Buffer {
  const label = `"labels":{"${LABEL}":${JSON.stringify(customId)}}`;
  const rest = body.subarray(1);
  return Buffer.concat([Buffer.from(`{${label}${rest.length > 1 ? ',' : ''}`), rest]);
}

/** `gs://bucket/prefix` as the bucket and the prefix with its trailing `/` ('' for the bucket's root). */
function parseGcsUri(provider: string, uri: string, strict = true): { bucket: string; prefix: string } {
  const match = /^gs:\/\/([a-z0-9][a-z0-9._-]{1,220}[a-z0-9])(?:\/(.*))?$/.exec(uri);
  if (match === null) {
    if (strict) throw new Error(`provider ${provider}: "batch_gcs_uri" must be gs://bucket or gs://bucket/prefix`);
    return { bucket: '', prefix: '' };
  }
  const prefix = (match[2] ?? '').replace(/^\/+|\/+$/g, '');
  return { bucket: match[1]!, prefix: prefix === '' ? '' : `${prefix}/` };
}

/** One prediction; a line the gateway cannot read is skipped (its line ends with no result). */
function readResult(text: string): ProviderBatchResult | null {
  let line: OutputLine;
  try {
    line = JSON.parse(text) as OutputLine;
  } catch {
    return null;
  }
  const labelled = line.request?.labels?.[LABEL];
  const customId = typeof line.custom_id === 'string' ? line.custom_id : typeof labelled === 'string' ? labelled : null;
  if (customId === null) return null;
  const status = typeof line.status === 'string' ? line.status : '';
  if (status === '' && line.response !== undefined && line.response !== null) {
    return { customId, outcome: 'answered', status: 200, body: Buffer.from(JSON.stringify(line.response)) };
  }
  // Vertex AI names a line's failure in words; its status is read from them as Google's own codes say it.
  const code = /RESOURCE_EXHAUSTED|\b429\b/.test(status) ? 429 : /INVALID_ARGUMENT|\b400\b|Bad Request/i.test(status) ? 400 : 500;
  return { customId, outcome: 'answered', status: code, body: Buffer.from(JSON.stringify({ error: { code, message: status === '' ? 'no response' : status, status: code === 400 ? 'INVALID_ARGUMENT' : code === 429 ? 'RESOURCE_EXHAUSTED' : 'INTERNAL' } })) };
}
