import { GatewayError } from '@gateway/shared';
import { estimatePromptTokens } from '../policy/token-estimate.js';
import { anthropicMessages } from '../protocols/anthropic-messages/anthropic-messages.js';
import { parseMessagesRequest } from '../protocols/anthropic-messages/parse-request.js';
import type { Exchange } from '../http/exchange.js';
import { GatewayCall, type GatewayDeps, type RequestInfo } from './gateway-call.js';
import { CLIENT_CLOSED } from './inference-call.js';
import { parseJsonBody } from '../protocols/json-body.js';

/**
 * POST /v1/messages/count_tokens: the gateway's estimate of a Messages request's prompt tokens
 * (the figure its quota reserves), `{"input_tokens": n}`. Authenticated, checked against the
 * project's model policy and audited like any request; no provider is called, so no usage record,
 * no quota and no rate limit is spent.
 */
export class CountTokensCall extends GatewayCall {
  constructor(deps: GatewayDeps, ex: Exchange, info: RequestInfo) {
    super(deps, ex, info, anthropicMessages);
  }

  clientGone(): void {
    this.finish('cancelled', CLIENT_CLOSED, null);
  }

  tooLarge(): void {
    const known = this.knownNow;
    if (known !== null) this.key = known;
    else this.identify();
    this.fail(new GatewayError('PAYLOAD_TOO_LARGE', `The body is larger than ${this.deps.config.maxBodyBytes} bytes.`), 'error');
  }

  async onBody(raw: Buffer): Promise<void> {
    if (!(await this.admitted())) return;
    if (!this.info.jsonBody) {
      return this.fail(new GatewayError('UNSUPPORTED_MEDIA_TYPE', 'The body must be JSON: send content-type: application/json.'), 'error');
    }
    let model: string;
    let estimate: number;
    try {
      const json = parseJsonBody(raw);
      const parsed = parseMessagesRequest(json, raw, 'count');
      model = this.model = parsed.model;
      this.deps.router.route(model);
      estimate = estimatePromptTokens(parsed.chat);
    } catch (err) {
      if (!(err instanceof GatewayError)) throw err;
      return this.fail(err, 'error');
    }
    const policy = await this.projectPolicy();
    if (policy === null) return;
    if (policy.allowed_models !== null && !policy.allowed_models.includes(model)) {
      return this.fail(new GatewayError('MODEL_NOT_ALLOWED', `The model \`${model}\` is not allowed for this project.`, { param: 'model' }), 'policy_blocked');
    }
    if (this.ex.aborted) return this.finish('cancelled', CLIENT_CLOSED, null);
    this.ex.send(200, 'application/json', JSON.stringify({ input_tokens: estimate }));
    this.finish('success', 200, null);
  }

  revoke(reason: GatewayError = GatewayCall.keyDeleted()): void {
    this.fail(reason, reason.code === 'UNAUTHORIZED' ? 'auth_failed' : 'error');
  }
}
