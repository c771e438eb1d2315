import { Api } from './api.js';
import { AuthError, CliError, EXIT, UsageError } from './cli-errors.js';
import type { CommandContext } from './command.js';
import { configPath, readConfig } from './config-file.js';
import { Http, type VerboseLog } from './http.js';
import { chooseFormat, Output, type Writer } from './output.js';
import { parseCommandLine } from './parse-command.js';
import { Session } from './session.js';
import { sanitize } from './table.js';
import type { Terminal } from './terminal.js';

/** One gatewayctl invocation: parse, run the command, turn every failure into its message and exit code. */
export interface Io {
  stdout: Writer;
  stderr: Writer;
  term: Terminal;
  env: NodeJS.ProcessEnv;
  now(): number;
}

export async function run(argv: string[], io: Io): Promise<number> {
  let commandName: string | null = null;
  try {
    const line = parseCommandLine(argv);
    if (line.kind === 'help') {
      (line.exitCode === 0 ? io.stdout : io.stderr).write(line.text);
      return line.exitCode;
    }
    commandName = line.command.path.join(' ');
    const format = chooseFormat(line.values.output as string | undefined, io.term.stdoutIsTTY);
    // https://no-color.org: present and not empty.
    const colour = io.term.stdoutIsTTY && (io.env.NO_COLOR ?? '') === '';
    const out = new Output(format, io.stdout, io.stderr, colour, io.term.stdoutIsTTY);
    const verbose: VerboseLog = line.values.verbose === true ? (text) => io.stderr.write(`${sanitize(text)}\n`) : null;
    const config = configPath(io.env);
    const ctx: CommandContext = {
      args: line.args,
      values: line.values,
      out,
      term: io.term,
      config,
      verbose,
      now: io.now,
      async api() {
        const stored = await readConfig(config.path);
        if (stored?.token === undefined) throw new AuthError(`not signed in; sign in with: gatewayctl login --url <control plane URL>`);
        const http = new Http(stored.url, verbose);
        return new Api(http, new Session(http, config, stored, io.now));
      },
    };
    return (await line.command.run(ctx)) ?? EXIT.ok;
  } catch (err) {
    if (err instanceof CliError) {
      io.stderr.write(`gatewayctl: ${sanitize(err.message)}\n`);
      if (err instanceof UsageError && commandName !== null) io.stderr.write(`Run gatewayctl ${commandName} --help for its usage.\n`);
      return err.exitCode;
    }
    io.stderr.write(`gatewayctl: unexpected error: ${sanitize(err instanceof Error ? err.message : String(err))}\n`);
    return EXIT.api;
  }
}
