import { API_KEY_PREFIX } from '@gateway/shared';

/**
 * What was wrong with the key a client sent, said without repeating it: where it was and its
 * general shape (length, whether it is a gateway key or looks like a provider's), never a
 * character of it. Built only on the refusal path, from headers read while the request callback
 * still holds them.
 */

const SEND_IT = 'send it as x-api-key: <key> or Authorization: Bearer <key>';

/** The message for a request that presented no usable key, from the headers that might hold one. */
export function missingKeyMessage(authorization: string, azureApiKey: string): string {
  const auth = authorization.trim();
  if (auth !== '') {
    if (/^bearer$/i.test(auth)) return `The Authorization header says Bearer but holds no key; ${SEND_IT}.`;
    const scheme = /^([A-Za-z-]{1,16})\s+\S/.exec(auth)?.[1];
    if (scheme !== undefined) return `The Authorization header uses the "${scheme}" scheme, not Bearer; ${SEND_IT}.`;
    return `The Authorization header holds ${describe(auth)} without "Bearer " before it; ${SEND_IT}.`;
  }
  const azure = azureApiKey.trim();
  if (azure !== '') return `The key came in an api-key header (Azure OpenAI's), which the gateway does not read: ${SEND_IT}. It holds ${describe(azure)}.`;
  return `No API key: ${SEND_IT}.`;
}

/** The message for a key that is not shaped like a gateway key at all. */
export function malformedKeyMessage(apiKey: string): string {
  return `The API key is not valid: it is ${describe(apiKey)}.`;
}

function describe(value: string): string {
  if (value.startsWith(API_KEY_PREFIX)) return `a gateway key (${API_KEY_PREFIX}…, ${value.length} characters)`;
  const lookalike = value.startsWith('sk-ant-') ? 'an Anthropic key' : value.startsWith('sk-') ? 'an OpenAI key' : value.startsWith('AIza') ? 'a Google API key' : null;
  const what = `${value.length} characters not starting with ${API_KEY_PREFIX}, as gateway keys do`;
  return lookalike === null ? what : `${what} (it looks like ${lookalike}: use a key of a project of this gateway instead)`;
}
