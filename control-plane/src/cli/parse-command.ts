import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError } from './cli-errors.js';
import type { CommandSpec, Options } from './command.js';
import { COMMANDS, GLOBAL_OPTIONS } from './commands/index.js';
import { commandHelp, generalHelp, groupHelp, usageLine } from './help.js';

/**
 * The command line, read by node:util parseArgs twice: once loosely, knowing every option of
 * every command, only to find which command the words name (so options may come before it);
 * then strictly with that command's own options, which refuses anything else.
 */
export type ParsedLine =
  | { kind: 'help'; text: string; exitCode: 0 | 2 }
  | { kind: 'run'; command: CommandSpec; args: string[]; values: Record<string, string | boolean | undefined> };

type ParseOptions = NonNullable<ParseArgsConfig['options']>;

const toParseOptions = (options: Options): ParseOptions =>
  Object.fromEntries(Object.entries(options).map(([name, spec]) => [name, spec.short === undefined ? { type: spec.type } : { type: spec.type, short: spec.short }]));

const ALL_OPTIONS = toParseOptions(Object.assign({}, GLOBAL_OPTIONS, ...COMMANDS.map((c) => c.options ?? {})));
const GROUPS = new Set(COMMANDS.filter((c) => c.path.length > 1).map((c) => c.path[0] as string));

export function parseCommandLine(argv: string[]): ParsedLine {
  refuseSecretsAsFlags(argv);
  const loose = parseArgs({ args: argv, options: ALL_OPTIONS, strict: false, allowPositionals: true });
  const words = loose.positionals;
  const wantsHelp = loose.values.help === true;

  if (words[0] === 'help') return helpFor(words.slice(1));
  const command = findCommand(words);
  if (command === null) {
    if (words.length === 0) return { kind: 'help', text: generalHelp(), exitCode: wantsHelp ? 0 : 2 };
    const group = words[0] as string;
    if (GROUPS.has(group) && words.length === 1) {
      if (wantsHelp) return { kind: 'help', text: groupHelp(group), exitCode: 0 };
      throw new UsageError(`"${group}" needs a subcommand: ${subcommandsOf(group)}`);
    }
    if (GROUPS.has(group)) throw new UsageError(`"${group}" has no subcommand "${words[1]}"; it has ${subcommandsOf(group)}`);
    throw new UsageError(`no command "${group}"; run gatewayctl --help for the list`);
  }

  let strict;
  try {
    strict = parseArgs({ args: argv, options: toParseOptions({ ...GLOBAL_OPTIONS, ...command.options }), strict: true, allowPositionals: true });
  } catch (err) {
    // parseArgs' messages name the option, never its value; the first sentence is the useful one.
    throw new UsageError(`${(err as Error).message.split('. ')[0]}; see gatewayctl ${command.path.join(' ')} --help`);
  }
  if (strict.values.help === true) return { kind: 'help', text: commandHelp(command), exitCode: 0 };
  const args = strict.positionals.slice(command.path.length);
  const spec = command.args ?? [];
  const min = spec.filter((a) => a.startsWith('<')).length;
  if (args.length < min || args.length > spec.length) {
    const problem = args.length < min ? `needs ${spec.slice(args.length).filter((a) => a.startsWith('<')).join(' ')}` : `takes no argument "${args[spec.length]}"`;
    throw new UsageError(`gatewayctl ${command.path.join(' ')} ${problem}; usage: ${usageLine(command)}`);
  }
  return { kind: 'run', command, args, values: strict.values as Record<string, string | boolean | undefined> };
}

/** The longest command whose words start the line: `usage summary` before `usage`. */
function findCommand(words: string[]): CommandSpec | null {
  let found: CommandSpec | null = null;
  for (const command of COMMANDS) {
    if (command.path.every((w, i) => words[i] === w) && (found === null || command.path.length > found.path.length)) found = command;
  }
  return found;
}

function helpFor(words: string[]): ParsedLine {
  const command = findCommand(words);
  if (command !== null) return { kind: 'help', text: commandHelp(command), exitCode: 0 };
  if (words[0] !== undefined && GROUPS.has(words[0])) return { kind: 'help', text: groupHelp(words[0]), exitCode: 0 };
  return { kind: 'help', text: generalHelp(), exitCode: words.length === 0 ? 0 : 2 };
}

function subcommandsOf(group: string): string {
  return COMMANDS.filter((c) => c.path[0] === group && c.path.length > 1).map((c) => c.path.slice(1).join(' ')).join(', ');
}

/**
 * A password or token on the command line stays in the shell history and shows in `ps`: refuse it
 * by name, before parsing, without repeating the value.
 */
function refuseSecretsAsFlags(argv: string[]): void {
  for (const word of argv) {
    if (word === '--') return;
    const name = /^--(password|token|api-key|secret)(?:=|$)/.exec(word)?.[1];
    if (name !== undefined) {
      throw new UsageError(`gatewayctl takes no --${name} on the command line (it would stay in the shell history and show in the process list); ${name === 'password' ? 'type it when asked, or pipe it in with --password-stdin' : 'sign in with gatewayctl login'}`);
    }
  }
}
