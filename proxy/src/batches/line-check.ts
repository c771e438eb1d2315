import { Errors, type BatchEndpoint, type GatewayError } from '@gateway/shared';

/**
 * One request line of a batch input file, checked as it is read (OpenAI's batch input format:
 * `{"custom_id", "method": "POST", "url", "body"}`), so a bad file is refused at upload with the
 * line named rather than failing line by line later. Only what running the line needs is read:
 * the body goes on to its endpoint's own checks when the line runs.
 */
export interface CheckedLine {
  customId: string;
  url: BatchEndpoint;
}

/** The endpoints an uploaded (OpenAI) batch file may call. */
export const FILE_ENDPOINTS: ReadonlySet<string> = new Set(['/v1/chat/completions', '/v1/embeddings', '/v1/responses']);

/** OpenAI allows custom ids of any text; a bound keeps results and error lines small. */
const MAX_CUSTOM_ID = 512;

export function checkLine(text: string, lineNumber: number, endpoints: ReadonlySet<string>): CheckedLine | GatewayError {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return Errors.badBatchLine(lineNumber, 'not valid JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return Errors.badBatchLine(lineNumber, 'not a JSON object');
  const line = value as Record<string, unknown>;
  const customId = line.custom_id;
  if (typeof customId !== 'string' || customId === '') return Errors.badBatchLine(lineNumber, '`custom_id` must be a non-empty string');
  if (customId.length > MAX_CUSTOM_ID) return Errors.badBatchLine(lineNumber, `\`custom_id\` is longer than ${MAX_CUSTOM_ID} characters`);
  if (line.method !== 'POST') return Errors.badBatchLine(lineNumber, '`method` must be "POST"');
  const url = line.url;
  if (typeof url !== 'string' || !endpoints.has(url)) return Errors.badBatchLine(lineNumber, `\`url\` must be one of ${[...endpoints].join(', ')}`);
  const problem = bodyProblem(line.body, 'body');
  return problem === null ? { customId, url: url as BatchEndpoint } : Errors.badBatchLine(lineNumber, problem);
}

/** What is wrong with a line's request body (`field` names it), or null: an object naming its model, not a stream (a batch's answers are whole). */
export function bodyProblem(body: unknown, field: 'body' | 'params'): string | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return `\`${field}\` must be a JSON object`;
  const request = body as Record<string, unknown>;
  if (typeof request.model !== 'string' || request.model === '') return `\`${field}.model\` must be a non-empty string`;
  if (request.stream === true) return `\`${field}.stream\` cannot be true in a batch`;
  return null;
}

/** What a file's lines add up to while they are read: custom ids are unique, each url's first line is kept. */
export class LineTally {
  readonly customIds = new Set<string>();
  /** Each url the lines call, with the first request line (from 0) calling it. */
  readonly endpoints: Record<string, number> = {};
  lines = 0;

  add(line: CheckedLine, lineNumber: number): GatewayError | null {
    if (this.customIds.has(line.customId)) return Errors.badBatchLine(lineNumber, '`custom_id` repeats an earlier line\'s; each must be unique in the file');
    this.customIds.add(line.customId);
    if (!(line.url in this.endpoints)) this.endpoints[line.url] = this.lines;
    this.lines++;
    return null;
  }
}
