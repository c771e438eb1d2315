import type { Span } from './spans.js';

/**
 * Numbered placeholders for masked values (`<EMAIL_1>`): the same value gets the same number
 * within one request, wherever it occurs (every message, system prompt, tool result), so the model
 * can still tell that two mentions are one thing. One masker per request.
 */
export class Masker {
  private readonly numbers = new Map<string, number>();
  private readonly counts = new Map<string, number>();

  placeholder(kind: string, value: string): string {
    const key = `${kind}\u0000${value}`;
    let n = this.numbers.get(key);
    if (n === undefined) {
      n = (this.counts.get(kind) ?? 0) + 1;
      this.counts.set(kind, n);
      this.numbers.set(key, n);
    }
    return `<${kind}_${n}>`;
  }

  /** `text` with every span replaced by its placeholder (overlaps resolved: the earliest, then the longest, wins). */
  apply(text: string, spans: readonly Span[]): string {
    if (spans.length === 0) return text;
    const ordered = [...spans].sort((a, b) => a.start - b.start || b.end - a.end);
    let out = '';
    let at = 0;
    for (const span of ordered) {
      if (span.start < at) continue;
      out += text.slice(at, span.start) + this.placeholder(span.kind, text.slice(span.start, span.end));
      at = span.end;
    }
    return out + text.slice(at);
  }
}
