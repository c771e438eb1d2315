import { sendJson, startWireMock, type RunningWireMock } from '../../../test-support/wire-mock.js';
import { openAiEmbeddingsAnswer } from './openai-embeddings-wire.js';
import { openAiAnswer, sendPlan, WIRE_USAGE, type WirePlan } from './openai-wire-mock.js';

/**
 * Azure OpenAI's wire format: OpenAI's answers (the scenarios of openai-wire-mock.case.ts, by
 * deployment name) served at `/openai/deployments/{deployment}/chat/completions`, with what Azure
 * adds: the content filter's verdicts (`prompt_filter_results` on the answer and in a stream's
 * first chunk, which has `choices: []` and empty `id`, `object` and `model`;
 * `content_filter_results` in each choice), embeddings at `/openai/deployments/{deployment}/embeddings`
 * (OpenAI's answers, openai-embeddings-wire.case.ts), its own 401/404/429 bodies (`{ error: { code,
 * message } }`), `retry-after-ms` beside `retry-after`, and its content-filter refusals.
 *
 * As Azure does, a request without `api-version` is a 404 (`Resource not found`), one with a version
 * Azure does not serve a 400, one without the `api-key` header a 401.
 */
export const AZURE_SCENARIOS = {
  /** 400 `content_filter`: the prompt was refused. */
  filteredPrompt: 'azure-filtered-prompt',
  /** The answer was cut by the content filter: `finish_reason: "content_filter"`. */
  filteredAnswer: 'azure-filtered-answer',
  /** 429 with `retry-after-ms: 2500` and `retry-after: 9`. */
  retryAfterMs: 'azure-429-ms',
} as const;

const API_VERSIONS = new Set(['2023-05-15', '2024-02-01', '2024-06-01', '2024-10-21', '2024-12-01-preview', '2025-01-01-preview', '2025-03-01-preview', '2025-04-01-preview']);
const DEPLOYMENT_PATH = /^\/(?:[^?]*\/)?openai\/deployments\/([^/?]+)\/(chat\/completions|embeddings)$/;

const azureError = (code: string, message: string) => ({ error: { code, message } });
const SAFE = { hate: { filtered: false, severity: 'safe' }, self_harm: { filtered: false, severity: 'safe' }, sexual: { filtered: false, severity: 'safe' }, violence: { filtered: false, severity: 'safe' } };
const FILTERED = { ...SAFE, violence: { filtered: true, severity: 'medium' } };
const PROMPT_FILTERS = [{ prompt_index: 0, content_filter_results: { ...SAFE, jailbreak: { filtered: false, detected: false } } }];

export const CONTENT_FILTER_MESSAGE =
  "The response was filtered due to the prompt triggering Azure OpenAI's content management policy. Please modify your prompt and retry. To learn more about our content filtering policies please read our documentation: https://go.microsoft.com/fwlink/?linkid=2198766";

export function startAzureWireMock(): Promise<RunningWireMock> {
  return startWireMock((req, res) => {
    const url = new URL(req.path, 'http://azure.invalid');
    const route = DEPLOYMENT_PATH.exec(url.pathname);
    const version = url.searchParams.get('api-version');
    if (route === null || version === null) return sendJson(res, 404, azureError('404', 'Resource not found'));
    if (!API_VERSIONS.has(version)) return sendJson(res, 400, azureError('BadRequest', 'API version not supported'));
    if (!req.headers['api-key']) {
      return sendJson(res, 401, azureError('401', 'Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.'));
    }
    const deployment = decodeURIComponent(route[1] as string);
    sendPlan(res, route[2] === 'embeddings' ? azureEmbeddingsAnswer(deployment, version, req.body) : azureAnswer(deployment, version, req.body));
  });
}

function azureAnswer(deployment: string, version: string, body: Record<string, unknown>): WirePlan {
  switch (deployment) {
    case AZURE_SCENARIOS.filteredPrompt:
      return {
        kind: 'json',
        status: 400,
        body: {
          error: {
            message: CONTENT_FILTER_MESSAGE,
            type: null,
            param: 'prompt',
            code: 'content_filter',
            status: 400,
            innererror: { code: 'ResponsibleAIPolicyViolation', content_filter_result: { ...SAFE, violence: { filtered: true, severity: 'high' }, jailbreak: { filtered: false, detected: false } } },
          },
        },
      };
    case AZURE_SCENARIOS.retryAfterMs:
      return rateLimited(version, 9, '2500');
    case AZURE_SCENARIOS.filteredAnswer:
      return filteredAnswer(deployment, body);
  }
  const plan = openAiAnswer(deployment, body);
  if (plan.kind === 'sse') {
    return { ...plan, events: [promptFilterChunk(), ...plan.events.map((event) => withChoiceFilters(event, (delta) => (typeof delta.content === 'string' && delta.content !== '' ? SAFE : {})))] };
  }
  if (plan.status === 429) return rateLimited(version, Number(plan.headers?.['retry-after'] ?? 1));
  if (plan.status !== 200) return plan;
  return { ...plan, body: { ...withChoiceFilters(plan.body, () => SAFE), prompt_filter_results: PROMPT_FILTERS } };
}

/** Azure's embeddings: OpenAI's answers, with Azure's own 429. */
function azureEmbeddingsAnswer(deployment: string, version: string, body: Record<string, unknown>): WirePlan {
  const plan = openAiEmbeddingsAnswer(deployment, body);
  if (plan.kind === 'json' && plan.status === 429) return rateLimited(version, Number(plan.headers?.['retry-after'] ?? 1), undefined, 'Embeddings_Create');
  return plan;
}

function rateLimited(version: string, seconds: number, ms = String(seconds * 1000), operation = 'ChatCompletions_Create'): WirePlan {
  return {
    kind: 'json',
    status: 429,
    body: azureError('429', `Requests to the ${operation} Operation under Azure OpenAI API version ${version} have exceeded token rate limit of your current OpenAI S0 pricing tier. Please retry after ${seconds} seconds.`),
    headers: { 'retry-after': String(seconds), 'retry-after-ms': ms },
  };
}

function filteredAnswer(deployment: string, body: Record<string, unknown>): WirePlan {
  const base = { id: 'chatcmpl-azure', created: 1_700_000_000, model: deployment, system_fingerprint: 'fp_azure' };
  if (body.stream !== true) {
    return {
      kind: 'json',
      status: 200,
      body: {
        ...base,
        object: 'chat.completion',
        choices: [{ index: 0, message: { role: 'assistant', content: null, refusal: null }, logprobs: null, finish_reason: 'content_filter', content_filter_results: FILTERED }],
        usage: WIRE_USAGE,
        prompt_filter_results: PROMPT_FILTERS,
      },
    };
  }
  const chunk = (delta: Record<string, unknown>, finish: string | null, filters: object) => ({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta, logprobs: null, finish_reason: finish, content_filter_results: filters }] });
  const events = [promptFilterChunk(), chunk({ role: 'assistant', content: '' }, null, {}), chunk({ content: 'Hello' }, null, SAFE), chunk({}, 'content_filter', FILTERED)];
  if ((body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true) events.push({ ...base, object: 'chat.completion.chunk', choices: [], usage: WIRE_USAGE });
  return { kind: 'sse', events, end: 'done' };
}

function promptFilterChunk(): Record<string, unknown> {
  return { choices: [], created: 0, id: '', model: '', object: '', prompt_filter_results: PROMPT_FILTERS };
}

/** Each choice of an answer or chunk with its `content_filter_results`; the usage chunk has none. */
function withChoiceFilters(event: Record<string, unknown>, filters: (delta: Record<string, unknown>) => object): Record<string, unknown> {
  if (!Array.isArray(event.choices) || event.choices.length === 0) return event;
  const choices = (event.choices as Record<string, unknown>[]).map((choice) => ({ ...choice, content_filter_results: filters((choice.delta ?? choice.message ?? {}) as Record<string, unknown>) }));
  return { ...event, choices };
}
