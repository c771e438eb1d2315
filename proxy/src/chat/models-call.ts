import { GatewayError } from '@gateway/shared';
import { openAiChat } from '../protocols/openai-chat/openai-chat.js';
import type { Exchange } from '../http/exchange.js';
import { GatewayCall, type GatewayDeps, type RequestInfo } from './gateway-call.js';

/** GET /v1/models: the models this key may use (audited like any gateway request). */
export class ModelsCall extends GatewayCall {
  constructor(deps: GatewayDeps, ex: Exchange, info: RequestInfo) {
    super(deps, ex, info, openAiChat);
  }

  async run(): Promise<void> {
    if (!(await this.admitted())) return;
    const policy = await this.projectPolicy();
    if (policy === null) return;
    if (this.ex.aborted) return this.finish('cancelled', 499, null);
    this.ex.send(200, 'application/json', this.deps.router.modelsListFor(policy.allowed_models));
    this.finish('success', 200, null);
  }

  clientGone(): void {
    this.finish('cancelled', 499, null);
  }

  revoke(reason: GatewayError = GatewayCall.keyDeleted()): void {
    this.fail(reason, reason.code === 'UNAUTHORIZED' ? 'auth_failed' : 'error');
  }
}
