/**
 * The form of a webhook URL, checked before anything is resolved: http or https, at most 2048
 * characters, no credentials (they would sit in clear in the database and in every request line),
 * no fragment (meaningless in a request). Returns why it is refused ("must …"), or the parsed URL.
 */
export const MAX_URL_LENGTH = 2048;

export function parseWebhookUrl(text: string): { url: URL; problem: null } | { url: null; problem: string } {
  if (text.length > MAX_URL_LENGTH) return { url: null, problem: `must be at most ${MAX_URL_LENGTH} characters` };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { url: null, problem: 'must be an absolute http or https URL' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return { url: null, problem: 'must be an http or https URL' };
  if (url.hostname === '') return { url: null, problem: 'must name a host' };
  if (url.username !== '' || url.password !== '') return { url: null, problem: 'must not carry credentials (user:password@); authenticate deliveries by their signature' };
  if (url.hash !== '' || text.includes('#')) return { url: null, problem: 'must not have a fragment (#…)' };
  return { url, problem: null };
}
