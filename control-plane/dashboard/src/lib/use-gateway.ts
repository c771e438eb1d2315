import type { GatewayInfo, List, ServedModel } from '../api/types.js';
import { useApi } from '../auth/session-context.js';
import { useAsync, type Async } from './use-async.js';

/** The models the gateway serves (GET /v1/models): what a project's allow-list picks from. */
export function useServedModels(): Async<ServedModel[]> {
  const api = useApi();
  return useAsync(() => api.get<List<ServedModel>>('/v1/models').then((list) => list.data), []);
}

/** The gateway's public address (GET /v1/gateway), for the client examples. */
export function useGatewayInfo(): Async<GatewayInfo> {
  const api = useApi();
  return useAsync(() => api.get<GatewayInfo>('/v1/gateway'), []);
}
