import { GatewayError, type KeyRecord } from '@gateway/shared';
import { GatewayCall } from './gateway-call.js';

/** GET /v1/models: the models this key may use (audited like any gateway request). */
export class ModelsCall extends GatewayCall {
  async run(authPending: KeyRecord | GatewayError | Promise<KeyRecord | GatewayError>): Promise<void> {
    const auth = authPending instanceof Promise ? await authPending : authPending;
    if (this.finished || !(await this.admit(auth))) return;
    let allowed: readonly string[] | null;
    try {
      const policy = this.deps.policies.get(this.projectId);
      allowed = (policy instanceof Promise ? await policy : policy).allowed_models;
    } catch {
      return this.fail(new GatewayError('UNAVAILABLE', 'The project policy cannot be read right now; retry shortly.', { retryAfter: 1 }), 'error');
    }
    if (this.finished) return;
    if (this.ex.aborted) return this.finish('cancelled', 499, null);
    this.ex.send(200, 'application/json', this.deps.router.modelsListFor(allowed));
    this.finish('success', 200, null);
  }

  clientGone(): void {
    this.finish('cancelled', 499, null);
  }

  revoke(reason: GatewayError = GatewayCall.keyDeleted()): void {
    this.fail(reason, reason.code === 'UNAUTHORIZED' ? 'auth_failed' : 'error');
  }
}
