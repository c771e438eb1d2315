import { Errors } from '@gateway/shared';
import { bodyProblem } from './line-check.js';

/**
 * A Message Batches create body (`{"requests": [{"custom_id", "params"}]}`) as the lines of a
 * batch input file, each `{"custom_id", "method": "POST", "url": "/v1/messages", "body": params}`,
 * checked as Anthropic checks them: custom ids of 1 to 64 letters, digits, `-` and `_`, unique;
 * params naming a model and not streaming. A bad request is refused naming its index.
 */
const CUSTOM_ID = /^[a-zA-Z0-9_-]{1,64}$/;

export function anthropicRequests(body: unknown, maxLines: number): string[] {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw Errors.invalidField('requests', 'The body must be a JSON object with `requests`.');
  const requests = (body as { requests?: unknown }).requests;
  if (!Array.isArray(requests) || requests.length === 0) throw Errors.invalidField('requests', '`requests` must be a non-empty array.');
  if (requests.length > maxLines) throw Errors.batchTooManyLines(maxLines);
  const seen = new Set<string>();
  const lines: string[] = [];
  for (let i = 0; i < requests.length; i++) {
    const request = requests[i] as { custom_id?: unknown; params?: unknown } | null;
    if (typeof request !== 'object' || request === null) throw Errors.badBatchRequest(i, 'each request must be an object with `custom_id` and `params`');
    const customId = request.custom_id;
    if (typeof customId !== 'string' || !CUSTOM_ID.test(customId)) throw Errors.badBatchRequest(i, '`custom_id` must be 1 to 64 letters, digits, `-` or `_`');
    if (seen.has(customId)) throw Errors.badBatchRequest(i, '`custom_id` repeats an earlier request\'s; each must be unique');
    seen.add(customId);
    const problem = bodyProblem(request.params, 'params');
    if (problem !== null) throw Errors.badBatchRequest(i, problem);
    lines.push(JSON.stringify({ custom_id: customId, method: 'POST', url: '/v1/messages', body: request.params }));
  }
  return lines;
}
