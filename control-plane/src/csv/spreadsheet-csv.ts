/**
 * CSV that is safe to open in a spreadsheet, written by the server's export and by gatewayctl
 * alike. Quoting is RFC 4180: a field holding a comma, a quote, a line break, or leading or
 * trailing spaces is quoted, with quotes doubled; lines end in CRLF.
 *
 * A cell that begins with = + - @ (or a tab or carriage return, which some spreadsheets skip
 * before reading a formula) would run as a formula, and model names, request ids, user agents and
 * provider reasons come from clients and providers: such a cell gets a leading apostrophe, which
 * spreadsheets read as "this is text" (OWASP's advice for CSV injection). Numbers are never
 * negative in our records, so no figure is touched.
 */
export type CsvValue = string | number | boolean | null;

const FORMULA_START = /^[=+\-@\t\r]/;

/** RFC 4180 quoting alone, for text that is known not to be a formula (headers). */
export function csvField(value: string): string {
  return /[",\r\n]|^\s|\s$/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

export function spreadsheetCell(value: CsvValue): string {
  if (value === null) return '';
  const text = String(value);
  return csvField(FORMULA_START.test(text) ? `'${text}` : text);
}

export function spreadsheetLine(values: readonly CsvValue[]): string {
  return `${values.map(spreadsheetCell).join(',')}\r\n`;
}
