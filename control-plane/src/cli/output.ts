import { UsageError } from './cli-errors.js';
import { spreadsheetLine, type CsvValue } from '../csv/spreadsheet-csv.js';
import { COLOURED, columnWidths, formatLine, PLAIN, renderPairs, renderTable, inertJson, sanitize, type Style } from './table.js';

/**
 * Everything gatewayctl prints. Data goes to stdout in the chosen format: `json` is the API's
 * answer exactly as it came, `csv` and `table` show the columns a command names. Messages for
 * the operator (what was done, what to do next) go to stderr, so stdout stays data.
 */
export type Format = 'table' | 'json' | 'csv';
export const FORMATS: readonly Format[] = ['table', 'json', 'csv'];

/**
 * How a cell is shown: `instant` is an RFC 3339 string or Unix ms (a table shows it to the
 * second, CSV in full RFC 3339), `number` and `cost` are right-aligned, `list` is an array.
 */
export type CellKind = 'text' | 'number' | 'cost' | 'instant' | 'list' | 'flag';

export interface Column<T> {
  /** The CSV header: the API's field name, dotted for nested fields. */
  field: string;
  /** The table header; the field in capitals by default. */
  title?: string;
  kind?: CellKind;
  get(row: T): unknown;
  /** Shown in CSV but left out of the table, to keep it narrow. */
  csvOnly?: boolean;
  /** What a table shows for null (CSV leaves the field empty); `-` by default. */
  blank?: string;
}

export interface Writer {
  write(text: string): unknown;
}

export function chooseFormat(flag: string | undefined, stdoutIsTTY: boolean): Format {
  if (flag === undefined) return stdoutIsTTY ? 'table' : 'json';
  if (!(FORMATS as readonly string[]).includes(flag)) throw new UsageError(`--output must be one of ${FORMATS.join(', ')}, not "${flag}"`);
  return flag as Format;
}

export class Output {
  private readonly style: Style;

  constructor(
    readonly format: Format,
    private readonly stdout: Writer,
    private readonly stderr: Writer,
    colour: boolean,
    /** stdout is a terminal: CSV cells are sanitised as table cells are (piped, they stay the data). */
    private readonly terminal = false,
  ) {
    this.style = colour ? COLOURED : PLAIN;
  }

  /** A list: the API's whole answer as JSON, or its rows under the columns. */
  list<T>(answer: unknown, rows: T[], columns: Column<T>[], totals?: T): void {
    if (this.format === 'json') return this.json(answer);
    if (this.format === 'csv') return this.csv(rows, columns);
    if (rows.length === 0) return this.note('Nothing found.');
    const shown = columns.filter((c) => !c.csvOnly);
    const cells = rows.map((row) => shown.map((c) => tableCell(c, row)));
    if (totals !== undefined) cells.push(shown.map((c, i) => (i === 0 ? 'TOTAL' : tableCell(c, totals))));
    this.stdout.write(renderTable(shown.map(titleOf), cells, shown.map(rightAligned), this.style));
  }

  /** One object: JSON as answered, a CSV header and line, or `label  value` lines. */
  item<T>(answer: unknown, row: T, columns: Column<T>[]): void {
    if (this.format === 'json') return this.json(answer);
    if (this.format === 'csv') return this.csv([row], columns);
    this.stdout.write(renderPairs(columns.map((c) => [c.field, tableCell(c, row)]), this.style));
  }

  /**
   * Rows that keep coming (--follow): JSON as one object a line, CSV under one header, a table
   * under one header whose columns widen when a wider cell arrives (the rows after it shift; the
   * earlier ones are already printed).
   */
  stream<T>(columns: Column<T>[]): (rows: T[]) => void {
    const shown = columns.filter((c) => !c.csvOnly);
    const titles = shown.map(titleOf);
    const aligned = shown.map(rightAligned);
    let widths: number[] = [];
    let started = false;
    return (rows) => {
      if (rows.length === 0) return;
      if (this.format === 'json') {
        for (const row of rows) this.stdout.write(`${inertJson(JSON.stringify(row))}\n`);
        return;
      }
      const header = !started;
      started = true;
      if (this.format === 'csv') {
        if (header) this.stdout.write(spreadsheetLine(columns.map((c) => c.field)));
        for (const row of rows) this.stdout.write(this.csvLine(columns, row));
        return;
      }
      const cells = rows.map((row) => shown.map((c) => tableCell(c, row)));
      widths = columnWidths(titles, cells, widths);
      if (header) this.stdout.write(formatLine(titles, widths, aligned, this.style.header));
      for (const row of cells) this.stdout.write(formatLine(row, widths, aligned));
    };
  }

  json(value: unknown): void {
    this.stdout.write(`${inertJson(JSON.stringify(value, null, 2))}\n`);
  }

  /** Bare text on stdout, e.g. a new key's secret for a script to capture. */
  raw(text: string): void {
    this.stdout.write(`${text}\n`);
  }

  /**
   * Data as it streams in (JSON lines, say), unchanged but for the characters a terminal would
   * act on, which inertJson writes as escapes (the same JSON to a parser). A stdout that is full
   * (a slow pipe) is waited for, so a large download is never held in memory.
   */
  async pipe(texts: AsyncIterable<string>): Promise<void> {
    for await (const text of texts) {
      if (this.stdout.write(inertJson(text)) === false) await drained(this.stdout);
    }
  }

  note(text: string): void {
    this.stderr.write(`${sanitize(text)}\n`);
  }

  private csv<T>(rows: T[], columns: Column<T>[]): void {
    this.stdout.write(spreadsheetLine(columns.map((c) => c.field)) + rows.map((row) => this.csvLine(columns, row)).join(''));
  }

  private csvLine<T>(columns: Column<T>[], row: T): string {
    const cells = columns.map((c) => csvCell(c, row));
    return spreadsheetLine(this.terminal ? cells.map((cell) => (typeof cell === 'string' ? sanitize(cell) : cell)) : cells);
  }
}

function drained(writer: Writer): Promise<void> {
  const stream = writer as Writer & { once?: (event: 'drain', listener: () => void) => unknown };
  return typeof stream.once === 'function' ? new Promise((resolve) => void stream.once?.('drain', resolve)) : Promise.resolve();
}

function titleOf(column: Column<unknown>): string {
  return column.title ?? column.field.replace(/[._]/g, ' ').toUpperCase();
}

function rightAligned(column: Column<unknown>): boolean {
  return column.kind === 'number' || column.kind === 'cost';
}

function tableCell<T>(column: Column<T>, row: T): string {
  const value = column.get(row);
  if (value === null || value === undefined) return column.blank ?? '-';
  switch (column.kind) {
    case 'instant':
      return sanitize(instant(value).replace('T', ' ').slice(0, 19));
    case 'cost':
      return typeof value === 'number' ? cost(value) : sanitize(String(value));
    case 'list':
      return Array.isArray(value) ? (value.length === 0 ? '(none)' : sanitize(value.join(', '))) : sanitize(String(value));
    case 'flag':
      return value === true ? 'yes' : value === false ? 'no' : sanitize(String(value));
    default:
      return sanitize(String(value));
  }
}

/** A CSV cell in the server export's form (one function for both): a formula is turned into text. */
function csvCell<T>(column: Column<T>, row: T): CsvValue {
  const value = column.get(row);
  if (value === null || value === undefined) return null;
  if (column.kind === 'instant') return instant(value);
  if (column.kind === 'cost' && typeof value === 'number') return cost(value);
  if (Array.isArray(value)) return value.join(',');
  return String(value);
}

function instant(value: unknown): string {
  const date = typeof value === 'number' ? new Date(value) : new Date(String(value));
  return Number.isNaN(date.getTime()) ? String(value) : date.toISOString();
}

/** Dollars in plain decimals: costs of single requests are far below a cent and must not turn into 1.95e-5. */
function cost(value: number): string {
  return value.toLocaleString('en-US', { maximumFractionDigits: 10, useGrouping: false });
}
