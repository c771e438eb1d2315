/**
 * Refuses an option an adapter does not know, so that a misspelt one stops the proxy at start
 * rather than being silently ignored.
 */
export function checkKnownOptions(provider: string, options: Record<string, unknown>, known: readonly string[]): void {
  for (const option of Object.keys(options)) {
    if (!known.includes(option)) throw new Error(`provider ${provider}: unknown option options.${option} (known: ${known.join(', ') || 'none'})`);
  }
}
