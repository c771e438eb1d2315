import { describe, expect, it } from 'vitest';
import { spreadsheetCell, spreadsheetLine } from './spreadsheet-csv.js';

describe('spreadsheet CSV', () => {
  it('quotes what RFC 4180 requires and nothing else', () => {
    expect(spreadsheetCell('gpt-4o-mini')).toBe('gpt-4o-mini');
    expect(spreadsheetCell('a,b')).toBe('"a,b"');
    expect(spreadsheetCell('say "hi"')).toBe('"say ""hi"""');
    expect(spreadsheetCell('two\r\nlines')).toBe('"two\r\nlines"');
    expect(spreadsheetCell(42)).toBe('42');
    expect(spreadsheetCell(0.0000195)).toBe('0.0000195');
    expect(spreadsheetCell(true)).toBe('true');
    expect(spreadsheetCell(null)).toBe('');
  });

  it('turns a cell that a spreadsheet would run as a formula into text', () => {
    expect(spreadsheetCell('=HYPERLINK("http://evil.test","x")')).toBe(`"'=HYPERLINK(""http://evil.test"",""x"")"`);
    expect(spreadsheetCell('+1')).toBe("'+1");
    expect(spreadsheetCell('-2+3')).toBe("'-2+3");
    expect(spreadsheetCell('@SUM(A1)')).toBe("'@SUM(A1)");
    expect(spreadsheetCell('\t=1')).toBe("'\t=1");
    // Only the first character counts: a model name with a dash inside is left alone.
    expect(spreadsheetCell('mock-1')).toBe('mock-1');
  });

  it('ends each line with CRLF', () => {
    expect(spreadsheetLine(['a', 1, null, '=x'])).toBe("a,1,,'=x\r\n");
  });
});
