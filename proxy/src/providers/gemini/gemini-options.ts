/**
 * The providers file's `options` for a gemini provider, checked at start so that a typo stops
 * the proxy with the provider and option named, instead of changing what is sent:
 *
 *   api_version      the API version in the path (default v1beta, which has systemInstruction,
 *                    tools, responseSchema and thinking for every current model)
 *   safety_settings  sent as `safetySettings` with every request: [{category, threshold}], e.g.
 *                    { category: HARM_CATEGORY_HARASSMENT, threshold: BLOCK_ONLY_HIGH }
 */
export interface GeminiOptions {
  apiVersion: string;
  safetySettings?: { category: string; threshold: string }[];
}

const KNOWN = new Set(['api_version', 'safety_settings']);

export function parseGeminiOptions(provider: string, options: Record<string, unknown>): GeminiOptions {
  for (const key of Object.keys(options)) {
    if (!KNOWN.has(key)) throw new Error(`provider ${provider}: unknown option "${key}" for type gemini (known: ${[...KNOWN].join(', ')})`);
  }
  const parsed: GeminiOptions = { apiVersion: 'v1beta' };
  const version = options.api_version;
  if (version !== undefined) {
    if (typeof version !== 'string' || !/^v\d+(?:(?:alpha|beta)\d*)?$/.test(version)) throw new Error(`provider ${provider}: option "api_version" must look like v1beta or v1`);
    parsed.apiVersion = version;
  }
  const safety = options.safety_settings;
  if (safety !== undefined) {
    const valid =
      Array.isArray(safety) &&
      safety.every((s: unknown) => typeof s === 'object' && s !== null && typeof (s as Record<string, unknown>).category === 'string' && typeof (s as Record<string, unknown>).threshold === 'string' && Object.keys(s).length === 2);
    if (!valid) throw new Error(`provider ${provider}: option "safety_settings" must be a list of { category, threshold } strings`);
    parsed.safetySettings = (safety as { category: string; threshold: string }[]).map(({ category, threshold }) => ({ category, threshold }));
  }
  return parsed;
}
