import { describe, expect, it } from 'vitest';
import { UsageError } from './cli-errors.js';
import { csvField } from '../csv/spreadsheet-csv.js';
import { chooseFormat, Output, type Column } from './output.js';

interface Row {
  name: string;
  count: number | null;
  cost: number | null;
  at: number;
  tags: string[] | null;
}

const COLUMNS: Column<Row>[] = [
  { field: 'name', get: (r) => r.name },
  { field: 'count', kind: 'number', get: (r) => r.count },
  { field: 'cost_usd', title: 'COST', kind: 'cost', get: (r) => r.cost },
  { field: 'at', kind: 'instant', get: (r) => r.at },
  { field: 'tags', kind: 'list', blank: '(any)', get: (r) => r.tags },
  { field: 'secret_detail', get: () => 'csv only', csvOnly: true },
];

const ROWS: Row[] = [
  { name: 'alpha', count: 5, cost: 0.0000195, at: Date.UTC(2026, 2, 2, 9, 15, 4, 120), tags: ['a', 'b'] },
  { name: 'a longer name', count: 12345, cost: null, at: Date.UTC(2026, 2, 2), tags: null },
];

function render(format: 'table' | 'json' | 'csv', colour = false, run: (out: Output) => void = (out) => out.list({ data: ROWS }, ROWS, COLUMNS), terminal = false) {
  let stdout = '';
  let stderr = '';
  const out = new Output(format, { write: (t: string) => (stdout += t) }, { write: (t: string) => (stderr += t) }, colour, terminal);
  run(out);
  return { stdout, stderr };
}

describe('output formats', () => {
  it('tables align columns, right-align numbers and leave no trailing spaces', () => {
    expect(render('table').stdout).toBe(
      [
        'NAME           COUNT       COST  AT                   TAGS',
        'alpha              5  0.0000195  2026-03-02 09:15:04  a, b',
        'a longer name  12345          -  2026-03-02 00:00:00  (any)',
        '',
      ].join('\n'),
    );
  });

  it('colours table headers only when asked to', () => {
    expect(render('table').stdout).not.toContain('\u001b');
    expect(render('table', true).stdout.split('\n')[0]).toContain('\u001b[1mNAME');
  });

  it('CSV has every column, full times, empty nulls and RFC 4180 quoting', () => {
    expect(render('csv').stdout).toBe(
      'name,count,cost_usd,at,tags,secret_detail\r\n' +
        'alpha,5,0.0000195,2026-03-02T09:15:04.120Z,"a,b",csv only\r\n' +
        'a longer name,12345,,2026-03-02T00:00:00.000Z,,csv only\r\n',
    );
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('two\nlines')).toBe('"two\nlines"');
    expect(csvField(' padded')).toBe('" padded"');
    expect(csvField('plain')).toBe('plain');
  });

  it('CSV turns a cell a spreadsheet would run as a formula into text, as the server export does', () => {
    const evil: Row = { name: '=HYPERLINK("http://evil.test","x")', count: 1, cost: null, at: 0, tags: ['@SUM(A1)', 'b'] };
    const { stdout } = render('csv', false, (out) => out.list({ data: [evil] }, [evil], COLUMNS));
    expect(stdout.split('\r\n')[1]).toBe(`"'=HYPERLINK(""http://evil.test"",""x"")",1,,1970-01-01T00:00:00.000Z,"'@SUM(A1),b",csv only`);
    const followed = render('csv', false, (out) => out.stream(COLUMNS)([{ ...evil, name: '+1' }]));
    expect(followed.stdout.split('\r\n')[1]).toMatch(/^'\+1,/);
  });

  it('JSON is the answer as given', () => {
    const answer = { data: ROWS, next_cursor: null, has_more: false };
    expect(JSON.parse(render('json', false, (out) => out.list(answer, ROWS, COLUMNS)).stdout)).toEqual(answer);
  });

  it('a table never passes a control character or bidi override to the terminal', () => {
    const evil: Row = { name: 'x\u001b]0;owned\u0007\u202e', count: 1, cost: null, at: 0, tags: ['\u009b31m'] };
    const { stdout } = render('table', false, (out) => out.list({ data: [evil] }, [evil], COLUMNS));
    expect(stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/);
    expect(stdout).toContain('x\uFFFD]0;owned\uFFFD\uFFFD');
  });

  it('JSON and, on a terminal, CSV never pass a control character or bidi override either', () => {
    const evil: Row = { name: 'x\u001b]0;owned\u0007\u202e\u009b', count: 1, cost: null, at: 0, tags: ['\u2066'] };
    // CSV lines end in CRLF (RFC 4180); every other control is out.
    const unprintable = /[\u0000-\u0009\u000b\u000c\u000e-\u001f\u007f-\u009f\u202e\u2066]/;
    for (const run of [(out: Output) => out.list({ data: [evil] }, [evil], COLUMNS), (out: Output) => out.item(evil, evil, COLUMNS), (out: Output) => out.stream(COLUMNS)([evil])]) {
      const json = render('json', false, run).stdout;
      expect(json).not.toMatch(unprintable);
      // The same value to a parser: only escaped.
      const parsed: unknown[] = json.startsWith('{\n') ? [JSON.parse(json)] : json.trim().split('\n').map((line) => JSON.parse(line) as unknown);
      expect(JSON.stringify(parsed)).toContain(JSON.stringify(evil.name));
      expect(render('csv', false, run, true).stdout).not.toMatch(unprintable);
    }
    // Piped (not a terminal), CSV is the data as it is, formulas aside.
    expect(render('csv', false, (out) => out.list({ data: [evil] }, [evil], COLUMNS)).stdout).toContain('\u202e');
  });

  it('a time the table cannot read is shown sanitised, as is every value of one item', () => {
    const evil = { name: '\u001b[2J', count: 1, cost: '\u001b[31m', at: '\u001b]8;;x\u0007', tags: null } as unknown as Row;
    for (const run of [(out: Output) => out.list({ data: [evil] }, [evil], COLUMNS), (out: Output) => out.item(evil, evil, COLUMNS), (out: Output) => out.stream(COLUMNS)([evil])]) {
      expect(render('table', false, run).stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    }
  });

  it('an empty list prints nothing on stdout and says so on stderr', () => {
    expect(render('table', false, (out) => out.list({ data: [] }, [], COLUMNS))).toEqual({ stdout: '', stderr: 'Nothing found.\n' });
  });

  it('a followed table prints its header once and widens for wider cells', () => {
    const { stdout } = render('table', false, (out) => {
      const show = out.stream(COLUMNS.slice(0, 2));
      show([]);
      show([ROWS[0] as Row]);
      show([ROWS[1] as Row]);
    });
    expect(stdout).toBe(['NAME   COUNT', 'alpha      5', 'a longer name  12345', ''].join('\n'));
  });

  it('defaults to a table on a terminal and to JSON otherwise', () => {
    expect(chooseFormat(undefined, true)).toBe('table');
    expect(chooseFormat(undefined, false)).toBe('json');
    expect(chooseFormat('csv', true)).toBe('csv');
    expect(() => chooseFormat('yaml', true)).toThrow(UsageError);
  });
});
