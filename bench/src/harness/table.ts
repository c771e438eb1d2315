import type { Row, ScenarioResult } from './report.js';

/** The one table of a run, as aligned text for the console and as Markdown for the README. */
const COLUMNS = ['scenario', 'figure', 'direct', 'bare', 'gateway', 'result', 'target', 'verdict'] as const;
type Column = (typeof COLUMNS)[number];

const VERDICT_TEXT = { pass: 'pass', miss: 'MISS', info: '' } as const;

function cells(result: ScenarioResult, row: Row, first: boolean): Record<Column, string> {
  return {
    scenario: first ? result.name : '',
    figure: row.figure,
    direct: row.direct ?? '',
    bare: row.bare ?? '',
    gateway: row.gateway ?? '',
    result: row.result,
    target: row.target ?? '',
    verdict: VERDICT_TEXT[row.verdict],
  };
}

function allRows(results: readonly ScenarioResult[]): Record<Column, string>[] {
  const out: Record<Column, string>[] = [];
  for (const result of results) {
    if (result.rows.length === 0) {
      out.push({ scenario: result.name, figure: result.status, direct: '', bare: '', gateway: '', result: result.note ?? '', target: '', verdict: '' });
      continue;
    }
    result.rows.forEach((row, i) => out.push(cells(result, row, i === 0)));
  }
  return out;
}

export function consoleTable(results: readonly ScenarioResult[]): string {
  const rows = allRows(results);
  const used = COLUMNS.filter((c) => c === 'scenario' || c === 'figure' || rows.some((r) => r[c] !== ''));
  const width = Object.fromEntries(used.map((c) => [c, Math.max(c.length, ...rows.map((r) => r[c].length))])) as Record<Column, number>;
  const line = (r: Record<Column, string>) => used.map((c) => r[c].padEnd(width[c])).join('  ').trimEnd();
  const header = Object.fromEntries(used.map((c) => [c, c])) as Record<Column, string>;
  const rule = used.map((c) => '─'.repeat(width[c])).join('  ');
  return [line(header), rule, ...rows.map(line)].join('\n');
}

export function markdownTable(results: readonly ScenarioResult[]): string {
  const rows = allRows(results);
  const escape = (s: string) => s.replace(/\|/g, '\\|');
  const out = [`| ${COLUMNS.join(' | ')} |`, `|${COLUMNS.map(() => '---').join('|')}|`];
  for (const r of rows) out.push(`| ${COLUMNS.map((c) => escape(c === 'scenario' && r[c] ? `**${r[c]}**` : r[c])).join(' | ')} |`);
  return out.join('\n');
}
