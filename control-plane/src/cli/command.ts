import type { Api } from './api.js';
import { UsageError, type ExitCode } from './cli-errors.js';
import type { VerboseLog } from './http.js';
import type { Output } from './output.js';
import type { Terminal } from './terminal.js';
import { parseInstant } from './time-input.js';

/** The shape of a gatewayctl command, and the typed readers of its flags. */
export interface OptionSpec {
  type: 'string' | 'boolean';
  short?: string;
  /** The value's placeholder in the help, e.g. `<tokens|none>`. */
  value?: string;
  help: string;
}

export type Options = Record<string, OptionSpec>;

export interface CommandSpec {
  path: readonly string[];
  /** Positional arguments for the help: `<required>` or `[optional]`. */
  args?: readonly string[];
  summary: string;
  options?: Options;
  run(ctx: CommandContext): Promise<ExitCode | void>;
}

export interface ConfigLocation {
  path: string;
  ownDirectory: boolean;
}

export interface CommandContext {
  args: string[];
  values: Record<string, string | boolean | undefined>;
  out: Output;
  term: Terminal;
  config: ConfigLocation;
  verbose: VerboseLog;
  now(): number;
  /** The management API as the saved sign-in (exit 3 without one). */
  api(): Promise<Api>;
}

export function text(ctx: CommandContext, name: string): string | undefined {
  const value = ctx.values[name];
  return typeof value === 'string' ? value : undefined;
}

export function flag(ctx: CommandContext, name: string): boolean {
  return ctx.values[name] === true;
}

export function required(ctx: CommandContext, name: string): string {
  const value = text(ctx, name);
  if (value === undefined || value.trim() === '') throw new UsageError(`--${name} is required`);
  return value;
}

export function integer(ctx: CommandContext, name: string, min = 0): number | undefined {
  const value = text(ctx, name);
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value)) || Number(value) < min) {
    throw new UsageError(`--${name} takes a whole number${min > 0 ? ` of at least ${min}` : ''}, not "${value}"`);
  }
  return Number(value);
}

/** A limit that `none` removes: a number, null for `none`, undefined when the flag is absent. */
export function limitOrNone(ctx: CommandContext, name: string, min = 0): number | null | undefined {
  return text(ctx, name)?.toLowerCase() === 'none' ? null : integer(ctx, name, min);
}

export function choice<T extends string>(ctx: CommandContext, name: string, choices: readonly T[]): T | undefined {
  const value = text(ctx, name);
  if (value === undefined) return undefined;
  if (!(choices as readonly string[]).includes(value)) throw new UsageError(`--${name} must be one of ${choices.join(', ')}, not "${value}"`);
  return value as T;
}

/** A time flag as Unix ms (see time-input.ts). */
export function instant(ctx: CommandContext, name: string, direction: 'ago' | 'ahead' = 'ago'): number | undefined {
  const value = text(ctx, name);
  return value === undefined ? undefined : parseInstant(value, name, ctx.now(), direction);
}

export function arg(ctx: CommandContext, index: number): string {
  return ctx.args[index] as string;
}
