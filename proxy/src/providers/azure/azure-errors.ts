import { Errors, GatewayError } from '@gateway/shared';
import { providerErrorDetail, withProviderText } from '../upstream-error.js';

/**
 * Azure OpenAI's departures from OpenAI's error answers. Its content filter refuses a prompt with
 * a 400 whose `error.code` is `content_filter` (and `param: "prompt"`, which names no field of a
 * chat request: the prompt is the client's `messages`). Its rate limits say how long to wait in
 * milliseconds (`retry-after-ms`) besides the whole seconds of `retry-after`.
 */
export function contentFilterRefusal(provider: string, bodyText: string): GatewayError | null {
  let code: unknown;
  try {
    code = (JSON.parse(bodyText) as { error?: { code?: unknown } | null }).error?.code;
  } catch {
    return null;
  }
  if (code !== 'content_filter') return null;
  const said = providerErrorDetail(bodyText);
  return withProviderText(Errors.providerRefused(provider, said.message ? `: ${said.message}` : '', 'messages'), said);
}

/**
 * The Retry-After value to honour, in whole seconds (rounded up): `retry-after-ms` when it is a
 * usable number, else `retry-after` as sent.
 */
export function azureRetryAfter(header: (name: string) => string | undefined): string | undefined {
  const ms = header('retry-after-ms')?.trim();
  if (ms !== undefined && /^\d+(\.\d+)?$/.test(ms)) return String(Math.ceil(Number(ms) / 1000));
  return header('retry-after');
}
