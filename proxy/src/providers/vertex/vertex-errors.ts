import { Errors, type GatewayError } from '@gateway/shared';
import { anthropicStatusError } from '../anthropic/anthropic-errors.js';
import { geminiStatusError } from '../gemini/gemini-error.js';
import { providerErrorDetail, withProviderText } from '../upstream-error.js';

/**
 * Vertex AI's failures as the gateway's. A 401 or 403 is the gateway's own misconfiguration (an
 * access token refused, a service account without the Vertex AI User role, a model not enabled
 * in the project), never the client's. Otherwise Google's own errors (quotas, 5xx) are in
 * Google's format and a Claude model's in Anthropic's: each publisher's mapping reads its own.
 */
export function vertexStatusError(provider: string, publisher: 'google' | 'anthropic', status: number, bodyText: string, retryAfter: string | undefined): GatewayError {
  if (status === 401 || status === 403) {
    const said = providerErrorDetail(bodyText);
    const what = status === 401 ? "refused the gateway's access token" : "does not allow the gateway's service account this request";
    return withProviderText(Errors.providerCredentialsRefused(provider, what, status, said.message), said);
  }
  return publisher === 'google' ? geminiStatusError(provider, status, bodyText, retryAfter, null) : anthropicStatusError(provider, status, bodyText, retryAfter);
}
