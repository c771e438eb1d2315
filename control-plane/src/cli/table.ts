/**
 * Aligned plain-text tables for a terminal. Cells are sanitised: a model name or user agent comes
 * from whoever called the gateway, and an escape sequence in it must not reach the operator's
 * terminal as one.
 */
// C0 and C1 controls, DEL, and the bidirectional marks, overrides and isolates.
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

export function sanitize(text: string): string {
  return text.replace(UNPRINTABLE, '\uFFFD');
}

// What JSON.stringify leaves raw of UNPRINTABLE (it escapes C0 controls itself): DEL, C1, bidi marks.
const RAW_IN_JSON = /[\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** JSON text whose strings carry those characters as \u escapes: the same value to a parser, inert on a terminal. */
export function inertJson(json: string): string {
  return json.replace(RAW_IN_JSON, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

export interface Style {
  header(text: string): string;
}

export const PLAIN: Style = { header: (text) => text };
export const COLOURED: Style = { header: (text) => `\u001b[1m${text}\u001b[22m` };

/** Columns two spaces apart, numbers right-aligned, no trailing spaces. */
export function renderTable(titles: string[], rows: string[][], rightAligned: boolean[], style: Style): string {
  const widths = columnWidths(titles, rows);
  return formatLine(titles, widths, rightAligned, style.header) + rows.map((row) => formatLine(row, widths, rightAligned)).join('');
}

export function formatLine(cells: string[], widths: number[], rightAligned: boolean[], paint: (text: string) => string = (t) => t): string {
  const padded = cells.map((cell, i) => {
    const width = widths[i] ?? 0;
    if (rightAligned[i]) return paint(cell.padStart(width));
    return paint(i === cells.length - 1 ? cell : cell.padEnd(width));
  });
  return `${padded.join('  ').trimEnd()}\n`;
}

export function columnWidths(titles: string[], rows: string[][], floor: number[] = []): number[] {
  return titles.map((title, i) => Math.max(floor[i] ?? 0, title.length, ...rows.map((row) => (row[i] ?? '').length)));
}

/** One object as `label  value` lines. */
export function renderPairs(pairs: [string, string][], style: Style): string {
  const width = Math.max(0, ...pairs.map(([label]) => label.length));
  return pairs.map(([label, value]) => `${style.header(label.padEnd(width))}  ${value}`.trimEnd() + '\n').join('');
}
