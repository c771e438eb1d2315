import { describe, expect, it } from 'vitest';
import { UsageError } from './cli-errors.js';
import { COMMANDS, GLOBAL_OPTIONS } from './commands/index.js';
import { parseCommandLine } from './parse-command.js';

function run(argv: string[]) {
  const line = parseCommandLine(argv);
  if (line.kind !== 'run') throw new Error(`help, not a command: ${line.text.slice(0, 40)}`);
  return { path: line.command.path.join(' '), args: line.args, values: line.values };
}

describe('parseCommandLine', () => {
  it('finds the command wherever the options are', () => {
    expect(run(['-o', 'csv', 'keys', 'create', 'demo', '--name', 'ci'])).toEqual({ path: 'keys create', args: ['demo'], values: { output: 'csv', name: 'ci' } });
    expect(run(['usage', 'summary', '--group-by', 'project'])).toMatchObject({ path: 'usage summary', args: [] });
    expect(run(['usage', '--model', 'summary'])).toMatchObject({ path: 'usage', values: { model: 'summary' } });
    expect(run(['projects', 'get', '--', '-odd name-'])).toMatchObject({ args: ['-odd name-'] });
  });

  it("refuses another command's options, missing and extra arguments", () => {
    expect(() => run(['projects', 'list', '--name', 'x'])).toThrow(/Unknown option '--name'/);
    expect(() => run(['keys', 'delete', 'demo'])).toThrow(/needs <key>/);
    expect(() => run(['projects', 'list', 'extra'])).toThrow(/takes no argument "extra"/);
    expect(() => run(['projects'])).toThrow(/needs a subcommand: list, get, create, update, (purge-cache, )?delete/);
    expect(() => run(['nope'])).toThrow(UsageError);
  });

  it('refuses a password or token given as a flag without repeating it', () => {
    for (const argv of [['login', '--password', 'hunter2hunter2'], ['login', '--password=hunter2hunter2'], ['projects', 'list', '--token=abc.def.ghi']]) {
      let message = '';
      try {
        parseCommandLine(argv);
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message).toMatch(/takes no --(password|token) on the command line/);
      expect(message).not.toMatch(/hunter2|abc\.def/);
    }
    expect(run(['login', '--password-stdin'])).toMatchObject({ values: { 'password-stdin': true } });
  });

  it('answers --help for the whole tool, a group and a command', () => {
    expect(parseCommandLine(['--help'])).toMatchObject({ kind: 'help', exitCode: 0 });
    expect(parseCommandLine([])).toMatchObject({ kind: 'help', exitCode: 2 });
    const group = parseCommandLine(['keys', '--help']);
    expect(group.kind === 'help' && group.text).toContain('keys rotate <project> <key>');
    const command = parseCommandLine(['help', 'projects', 'create']);
    expect(command.kind === 'help' && command.text).toContain('--max-tokens-cap <n|none>');
  });

  it('gives every option one type and one short letter across commands, as the loose pass needs', () => {
    const seen = new Map<string, string>();
    const shorts = new Map<string, string>();
    for (const options of [GLOBAL_OPTIONS, ...COMMANDS.map((c) => c.options ?? {})]) {
      for (const [name, spec] of Object.entries(options)) {
        expect(seen.get(name) ?? spec.type, name).toBe(spec.type);
        seen.set(name, spec.type);
        if (spec.short !== undefined) {
          expect(shorts.get(spec.short) ?? name, `-${spec.short}`).toBe(name);
          shorts.set(spec.short, name);
        }
      }
    }
  });
});
