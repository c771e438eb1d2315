import { API_KEY_PREFIX, Errors, type GatewayError } from '@gateway/shared';

/**
 * What was wrong with the key a client sent, said without repeating it: where it was and its
 * general shape (length, whether it is a gateway key or looks like a provider's), never a
 * character of it. Built only on the refusal path, from headers read while the request callback
 * still holds them.
 */

/** The refusal of a request that presented no usable key, from the headers that might hold one. */
export function missingKeyError(authorization: string, azureApiKey: string): GatewayError {
  const auth = authorization.trim();
  if (auth !== '') {
    if (/^bearer$/i.test(auth)) return Errors.bearerWithoutKey();
    const scheme = /^([A-Za-z-]{1,16})\s+\S/.exec(auth)?.[1];
    if (scheme !== undefined) return Errors.keyInOtherScheme(scheme);
    return Errors.keyWithoutBearer(describe(auth));
  }
  const azure = azureApiKey.trim();
  if (azure !== '') return Errors.keyInApiKeyHeader(describe(azure));
  return Errors.noApiKey();
}

/** The refusal of a key that is not shaped like a gateway key at all. */
export function malformedKeyError(apiKey: string): GatewayError {
  return Errors.malformedApiKey(describe(apiKey));
}

function describe(value: string): string {
  if (value.startsWith(API_KEY_PREFIX)) return `a gateway key (${API_KEY_PREFIX}…, ${value.length} characters)`;
  const lookalike = value.startsWith('sk-ant-') ? 'an Anthropic key' : value.startsWith('sk-') ? 'an OpenAI key' : value.startsWith('AIza') ? 'a Google API key' : null;
  const what = `${value.length} characters not starting with ${API_KEY_PREFIX}, as gateway keys do`;
  return lookalike === null ? what : `${what} (it looks like ${lookalike}: use a key of a project of this gateway instead)`;
}
