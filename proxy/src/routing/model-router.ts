import { GatewayError, type ProvidersConfig } from '@gateway/shared';
import type { ProviderAdapter } from '../providers/adapter.js';
import { createAdapter } from '../providers/registry.js';

/** Model id → the adapter of the provider that serves it, built once at start. */
export class ModelRouter {
  private readonly byModel = new Map<string, ProviderAdapter>();
  readonly adapters: readonly ProviderAdapter[];
  /** GET /v1/models body, serialised once. */
  readonly modelsList: string;

  constructor(config: ProvidersConfig) {
    this.adapters = config.providers.map((p) => createAdapter(p));
    for (const adapter of this.adapters) for (const model of adapter.models) this.byModel.set(model, adapter);
    this.modelsList = JSON.stringify({
      object: 'list',
      data: [...this.byModel].map(([id, adapter]) => ({ id, object: 'model', created: 0, owned_by: adapter.name })),
    });
  }

  /** The models list restricted to a project's allow-list (serialised per call: allow-lists are rare). */
  modelsListFor(allowed: readonly string[] | null): string {
    if (allowed === null) return this.modelsList;
    return JSON.stringify({
      object: 'list',
      data: [...this.byModel].filter(([id]) => allowed.includes(id)).map(([id, adapter]) => ({ id, object: 'model', created: 0, owned_by: adapter.name })),
    });
  }

  route(model: string): ProviderAdapter {
    const adapter = this.byModel.get(model);
    if (adapter === undefined) throw new GatewayError('MODEL_NOT_FOUND', `The model \`${model}\` is not served by this gateway.`, { param: 'model' });
    return adapter;
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.adapters.map((a) => a.close()));
  }
}
