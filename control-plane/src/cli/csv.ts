/**
 * RFC 4180 CSV: a field holding a comma, a quote, a line break, or leading or trailing spaces is
 * quoted, with quotes doubled; lines end in CRLF.
 */
export function csvField(value: string): string {
  return /[",\r\n]|^\s|\s$/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

export function csvLine(fields: string[]): string {
  return `${fields.map(csvField).join(',')}\r\n`;
}
