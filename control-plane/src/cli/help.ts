import type { CommandSpec, Options } from './command.js';
import { COMMANDS, GLOBAL_OPTIONS } from './commands/index.js';

/** The --help texts, made from the command table so they cannot drift from what is parsed. */
const FOOTER = `Exit status: 0 ok, 1 the API refused (its message and code are printed), 2 bad flags or arguments,
3 not signed in or the token was refused, 4 the server could not be reached.
The sign-in is kept in $GATEWAYCTL_CONFIG, or ~/.config/gatewayctl/config.json (mode 0600).
Every command and format is described in docs/gatewayctl.md.
`;

export function usageLine(command: CommandSpec): string {
  return ['gatewayctl', ...command.path, ...(command.args ?? []), ...(command.options === undefined ? [] : ['[options]'])].join(' ');
}

function optionLines(options: Options): string[] {
  const rows = Object.entries(options).map(([name, spec]) => [`${spec.short === undefined ? '    ' : `-${spec.short}, `}--${name}${spec.value === undefined ? '' : ` ${spec.value}`}`, spec.help] as const);
  const width = Math.max(...rows.map(([left]) => left.length));
  return rows.map(([left, help]) => `  ${left.padEnd(width)}  ${help}`);
}

function commandList(commands: readonly CommandSpec[]): string[] {
  const rows = commands.map((c) => [[...c.path, ...(c.args ?? [])].join(' '), c.summary] as const);
  const width = Math.max(...rows.map(([left]) => left.length));
  return rows.map(([left, summary]) => `  ${left.padEnd(width)}  ${summary}`);
}

export function generalHelp(): string {
  return [
    "gatewayctl: the operators' client of the gateway's management API",
    '',
    'Usage: gatewayctl <command> [arguments] [options]',
    '',
    'Commands:',
    ...commandList(COMMANDS),
    '',
    'Options of every command:',
    ...optionLines(GLOBAL_OPTIONS),
    '',
    'Run gatewayctl <command> --help for the options of a command.',
    FOOTER,
  ].join('\n');
}

export function groupHelp(group: string): string {
  return ['Commands:', ...commandList(COMMANDS.filter((c) => c.path[0] === group)), '', 'Run gatewayctl <command> --help for its options.', ''].join('\n');
}

export function commandHelp(command: CommandSpec): string {
  const subcommands = COMMANDS.filter((c) => c !== command && c.path.length > command.path.length && command.path.every((w, i) => c.path[i] === w));
  return [
    `Usage: ${usageLine(command)}`,
    '',
    command.summary,
    ...(command.options === undefined ? [] : ['', 'Options:', ...optionLines(command.options)]),
    '',
    'Options of every command:',
    ...optionLines(GLOBAL_OPTIONS),
    ...(subcommands.length === 0 ? [] : ['', 'Also:', ...commandList(subcommands)]),
    '',
    FOOTER,
  ].join('\n');
}
