/**
 * The series a /metrics page holds, from the Prometheus text format: each sample's name (so a
 * histogram shows as its `_bucket`, `_sum` and `_count` series, as PromQL sees it) and the label
 * names seen on it. A family declared with no sample yet (a labelled counter nothing incremented)
 * is not a series, so it does not count as exported.
 */
export type Series = Map<string, Set<string>>;

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+\S+/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="(?:[^"\\]|\\.)*"/g;

export function parseExposition(text: string, into: Series = new Map()): Series {
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || line.trim() === '') continue;
    const sample = SAMPLE.exec(line);
    if (sample === null) throw new Error(`not a sample line: ${line}`);
    const [, name, labels] = sample;
    let seen = into.get(name!);
    if (seen === undefined) into.set(name!, (seen = new Set()));
    for (const [, label] of (labels ?? '').matchAll(LABEL)) seen.add(label!);
  }
  return into;
}
