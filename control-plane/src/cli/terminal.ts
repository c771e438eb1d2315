import { createInterface } from 'node:readline/promises';
import { CliError, EXIT, UsageError } from './cli-errors.js';
import { sanitize } from './table.js';

/**
 * Questions to the operator, asked on stderr so that stdout stays data. A password is read with
 * the terminal's echo off; without a terminal there is nobody to ask, and the command says which
 * flag to use instead.
 */
export interface Terminal {
  stdinIsTTY: boolean;
  stdoutIsTTY: boolean;
  /** All of standard input, less one trailing newline. */
  readStdin(): Promise<string>;
  ask(question: string): Promise<string>;
  askHidden(question: string): Promise<string>;
  confirm(question: string, flagInstead: string): Promise<boolean>;
}

export class Interrupted extends CliError {
  constructor() {
    super('interrupted', EXIT.interrupted);
  }
}

export function processTerminal(stdin: NodeJS.ReadStream = process.stdin, stderr: NodeJS.WritableStream = process.stderr, stdoutIsTTY = process.stdout.isTTY === true): Terminal {
  return {
    stdinIsTTY: stdin.isTTY === true,
    stdoutIsTTY,

    async readStdin() {
      const chunks: Buffer[] = [];
      for await (const chunk of stdin) chunks.push(chunk as Buffer);
      // One trailing newline is how echo and here-strings end; anything else is the secret's.
      return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
    },

    async ask(question) {
      const rl = createInterface({ input: stdin, output: stderr, terminal: stdin.isTTY === true });
      try {
        // A question may name a project or key, whose name came from someone else.
        return (await rl.question(sanitize(question))).trim();
      } catch (err) {
        // Ctrl-C at the question: the readline interface aborts it.
        if ((err as NodeJS.ErrnoException).code === 'ABORT_ERR') {
          stderr.write('\n');
          throw new Interrupted();
        }
        throw err;
      } finally {
        rl.close();
      }
    },

    askHidden: (question) => readHidden(stdin, stderr, question),

    async confirm(question, flagInstead) {
      if (stdin.isTTY !== true) throw new UsageError(`${question.replace(/\?$/, '')}: nobody to ask without a terminal; add ${flagInstead} to go ahead`);
      return /^y(es)?$/i.test(await this.ask(`${question} [y/N] `));
    },
  };
}

/** Reads one line in raw mode and echoes nothing; Ctrl-C interrupts, backspace and Ctrl-U edit. */
function readHidden(stdin: NodeJS.ReadStream, stderr: NodeJS.WritableStream, question: string): Promise<string> {
  stderr.write(sanitize(question));
  stdin.setRawMode(true);
  stdin.setEncoding('utf8');
  stdin.resume();
  return new Promise((resolve, reject) => {
    let answer = '';
    const finish = (result: () => void) => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      stderr.write('\n');
      result();
    };
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n' || (ch === '\u0004' && answer !== '')) return finish(() => resolve(answer));
        if (ch === '\u0003' || ch === '\u0004') return finish(() => reject(new Interrupted()));
        if (ch === '\u007f' || ch === '\b') answer = [...answer].slice(0, -1).join('');
        else if (ch === '\u0015') answer = '';
        else if (ch >= ' ') answer += ch;
      }
    };
    stdin.on('data', onData);
  });
}
