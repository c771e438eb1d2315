import { Errors, type GatewayError } from '@gateway/shared';

/** The proxy's model endpoints: sent here, they are a client pointed at the wrong port. */
const INFERENCE_PATHS = new Set(['/v1/chat/completions', '/v1/completions', '/v1/messages', '/v1/messages/count_tokens', '/v1/responses', '/v1/embeddings']);

/**
 * The 404 for a model request that reached the management API: it names the gateway's address
 * (PUBLIC_GATEWAY_URL), so a client configured with the control plane's URL learns its fix.
 */
export function inferenceOnManagementPort(path: string, gatewayUrl: string): GatewayError | null {
  if (!INFERENCE_PATHS.has(path.replace(/\/+$/, ''))) return null;
  const base = gatewayUrl.replace(/\/+$/, '');
  return Errors.modelRequestOnManagementApi(path, base);
}
