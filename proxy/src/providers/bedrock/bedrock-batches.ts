import { createHash } from 'node:crypto';
import type { ChatRequest } from '../adapter.js';
import { BatchApiClient } from '../batch-api-client.js';
import { BatchApi, type BatchAnswers, type BatchLine, type ProviderBatchResult } from '../provider-batches.js';
import { awsAuthorize } from './aws-request-signer.js';
import type { BedrockCredentials } from './bedrock-signer.js';

/**
 * Bedrock's batch inference (`batch: native` on a bedrock entry): the lines go up to S3 as one
 * JSONL object of `{recordId, modelInput}` (each modelInput the Converse body the adapter would
 * have sent), one model invocation job of type Converse is made of it (`POST
 * /model-invocation-job` on Bedrock's control plane, with the service role that reads and writes
 * the bucket), polled (`GET /model-invocation-job/{arn}`), stopped (`…/stop`), and its output
 * object (`{output prefix}/{job id}/input.jsonl.out`) is read back line by line. One job holds one
 * model's lines, and Bedrock takes no job under its minimum of records (`batch_min_records`,
 * 100 by default): a smaller batch is run by the gateway.
 */
export interface BedrockBatchLines extends BatchAnswers {
  /** The Converse body of a request, as `complete` would send it. */
  batchBody(request: ChatRequest): Buffer;
}

export interface BedrockBatchSettings {
  region: string;
  credentials: BedrockCredentials;
  /** The service role Bedrock runs the job as (it reads the input and writes the output). */
  roleArn: string;
  /** `s3://bucket/prefix`: where each job's input and output go. */
  s3Uri: string;
  /** Bedrock's control plane (`https://bedrock.{region}.amazonaws.com`). */
  controlUrl: string;
  /** An S3 endpoint to address by path (`{url}/{bucket}/{key}`); null for AWS's own, by virtual host. */
  s3Url: string | null;
  minRecords: number;
}

interface JobObject {
  jobArn?: string;
  status?: string;
}

interface OutputLine {
  recordId?: unknown;
  modelOutput?: unknown;
  error?: { errorCode?: unknown; errorMessage?: unknown } | null;
}

const ENDED = new Set(['Completed', 'PartiallyCompleted', 'Failed', 'Stopped', 'Expired']);
const INPUT_NAME = 'input.jsonl';

export class BedrockBatches extends BatchApi {
  override readonly minLines: number;
  private readonly s3: BatchApiClient;
  private readonly bucket: string;
  private readonly prefix: string;
  /** The path of an object's key: the bucket first when S3 is addressed by path. */
  private readonly objectPath: (key: string) => string;

  constructor(
    provider: string,
    private readonly settings: BedrockBatchSettings,
    private readonly adapter: BedrockBatchLines,
  ) {
    const control = new URL(settings.controlUrl);
    super(provider, control.origin, { accept: 'application/json' }, adapter, awsAuthorize(settings.credentials, settings.region, 'bedrock', control.host));
    this.minLines = settings.minRecords;
    const { bucket, prefix } = parseS3Uri(provider, settings.s3Uri);
    this.bucket = bucket;
    this.prefix = prefix;
    const s3 = new URL(settings.s3Url ?? `https://${bucket}.s3.${settings.region}.amazonaws.com`);
    const base = settings.s3Url === null ? '' : `${s3.pathname.replace(/\/+$/, '')}/${encodeURIComponent(bucket)}`;
    this.objectPath = (key) => `${base}/${key.split('/').map(encodeURIComponent).join('/')}`;
    this.s3 = new BatchApiClient(provider, s3.origin, {}, awsAuthorize(settings.credentials, settings.region, 's3', s3.host));
  }

  line(request: ChatRequest): { operation: string; body: Buffer } {
    // One job runs one model: lines of different models are different batches.
    return { operation: `converse:${request.upstreamModel}`, body: this.adapter.batchBody(request) };
  }

  async submit(operation: string, lines: readonly BatchLine[], tag: string): Promise<string> {
    const model = operation.slice('converse:'.length);
    const name = jobName(tag);
    const folder = `${this.prefix}${name}`;
    const parts: Buffer[] = [];
    // The bodies go in as the bytes the adapter made, never parsed again.
    for (const line of lines) parts.push(Buffer.from(`{"recordId":${JSON.stringify(line.customId)},"modelInput":`), line.body, Buffer.from('}\n'));
    await this.s3.upload('take the batch input', 'PUT', this.objectPath(`${folder}/${INPUT_NAME}`), Buffer.concat(parts), 'application/jsonl');
    const job = await this.client.json<JobObject>('make the batch inference job', 'POST', '/model-invocation-job', {
      jobName: name,
      roleArn: this.settings.roleArn,
      modelId: model,
      modelInvocationType: 'Converse',
      // The same lines sent again (a proxy that died before recording the job) make no second job.
      clientRequestToken: createHash('sha256').update(`${tag}\n${lines.map((l) => l.customId).join(',')}`).digest('hex').slice(0, 64),
      inputDataConfig: { s3InputDataConfig: { s3Uri: `s3://${this.bucket}/${folder}/${INPUT_NAME}`, s3InputFormat: 'JSONL' } },
      outputDataConfig: { s3OutputDataConfig: { s3Uri: `s3://${this.bucket}/${folder}/output/` } },
      tags: [{ key: 'gateway_batch', value: tag }],
    });
    if (typeof job.jobArn !== 'string' || job.jobArn === '') throw new Error('Bedrock made no job');
    // The provider's id of the batch: the job's ARN, and after it where its output goes (the next proxy reads it from here).
    return `${job.jobArn} ${folder}/output/`;
  }

  async ended(id: string): Promise<boolean> {
    return ENDED.has((await this.get(id)).status ?? '');
  }

  async *results(id: string): AsyncIterable<ProviderBatchResult> {
    const { arn, output } = splitId(id);
    const job = await this.get(id);
    const jobId = arn.slice(arn.lastIndexOf('/') + 1);
    // A job that failed before writing anything has no output: its lines end with no result.
    for await (const text of this.s3.lines('send the batch output', this.objectPath(`${output}${jobId}/${INPUT_NAME}.out`), 'none')) {
      const result = readResult(text);
      if (result !== null) yield result;
    }
    if (job.status === 'Stopped') yield { customId: '*', outcome: 'canceled' };
    if (job.status === 'Expired') yield { customId: '*', outcome: 'expired' };
  }

  protected async cancelRunning(id: string): Promise<void> {
    await this.client.json('stop the batch inference job', 'POST', `/model-invocation-job/${encodeURIComponent(splitId(id).arn)}/stop`);
  }

  override async close(): Promise<void> {
    await Promise.all([super.close(), this.s3.close()]);
  }

  private get(id: string): Promise<JobObject> {
    return this.client.json<JobObject>('say how the batch inference job goes', 'GET', `/model-invocation-job/${encodeURIComponent(splitId(id).arn)}`);
  }
}

/** Bedrock's job names: letters, digits and dashes (a batch id's `_` is not one of them). */
function jobName(tag: string): string {
  return tag.replace(/[^a-zA-Z0-9-]/g, '-').slice(0, 63);
}

function splitId(id: string): { arn: string; output: string } {
  const space = id.indexOf(' ');
  return space < 0 ? { arn: id, output: '' } : { arn: id.slice(0, space), output: id.slice(space + 1) };
}

function parseS3Uri(provider: string, uri: string): { bucket: string; prefix: string } {
  const match = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(uri);
  if (match === null) throw new Error(`provider ${provider}: "batch_s3_uri" must be s3://bucket or s3://bucket/prefix`);
  const prefix = (match[2] ?? '').replace(/^\/+|\/+$/g, '');
  return { bucket: match[1]!, prefix: prefix === '' ? '' : `${prefix}/` };
}

/** One output record; a record the gateway cannot read is skipped (its line ends with no result). */
function readResult(text: string): ProviderBatchResult | null {
  let line: OutputLine;
  try {
    line = JSON.parse(text) as OutputLine;
  } catch {
    return null;
  }
  const customId = line.recordId;
  if (typeof customId !== 'string') return null;
  if (line.error !== undefined && line.error !== null) {
    const code = line.error.errorCode;
    const status = typeof code === 'number' && code >= 400 && code <= 599 ? code : 500;
    return { customId, outcome: 'answered', status, body: Buffer.from(JSON.stringify({ message: typeof line.error.errorMessage === 'string' ? line.error.errorMessage : '' })) };
  }
  return { customId, outcome: 'answered', status: 200, body: Buffer.from(JSON.stringify(line.modelOutput ?? null)) };
}
