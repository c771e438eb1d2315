import { csvField } from '../cli/csv.js';

/**
 * CSV lines that are safe to open in a spreadsheet. Quoting is RFC 4180 (the CLI's csvField).
 * A cell that begins with = + - @ (or a tab or carriage return, which some spreadsheets skip
 * before reading a formula) would run as a formula, and model names, request ids and provider
 * reasons come from clients and providers: such a cell gets a leading apostrophe, which
 * spreadsheets read as "this is text" (OWASP's advice for CSV injection). Numbers are never
 * negative here, so no figure is touched.
 */
export type CsvValue = string | number | boolean | null;

const FORMULA_START = /^[=+\-@\t\r]/;

export function spreadsheetCell(value: CsvValue): string {
  if (value === null) return '';
  const text = String(value);
  return csvField(FORMULA_START.test(text) ? `'${text}` : text);
}

export function spreadsheetLine(values: readonly CsvValue[]): string {
  return `${values.map(spreadsheetCell).join(',')}\r\n`;
}
