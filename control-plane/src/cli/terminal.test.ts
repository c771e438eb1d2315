import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { UsageError } from './cli-errors.js';
import { Interrupted, processTerminal } from './terminal.js';

/** A terminal made of streams: what the operator types goes in, what they would see comes out. */
function fakeTerminal(isTTY = true) {
  const input = Object.assign(new PassThrough(), { isTTY, rawMode: false, setRawMode(on: boolean) { input.rawMode = on; return input; } });
  const output = new PassThrough();
  let seen = '';
  output.on('data', (d: Buffer) => (seen += d.toString()));
  const term = processTerminal(input as unknown as NodeJS.ReadStream, output, true);
  return { term, input, seen: () => seen };
}

describe('terminal questions', () => {
  it('reads a password without echoing it, with backspace, and leaves raw mode', async () => {
    const { term, input, seen } = fakeTerminal();
    const answer = term.askHidden('Password: ');
    expect(input.rawMode).toBe(true);
    input.write('hunter2X\u007f\u007fx2\r');
    expect(await answer).toBe('hunterx2');
    expect(seen()).toBe('Password: \n');
    expect(input.rawMode).toBe(false);
  });

  it('Ctrl-C at a password or a question interrupts (exit 130)', async () => {
    const hidden = fakeTerminal();
    const password = hidden.term.askHidden('Password: ');
    hidden.input.write('abc\u0003');
    await expect(password).rejects.toBeInstanceOf(Interrupted);

    const asked = fakeTerminal();
    const confirm = asked.term.confirm('Delete it?', '--yes');
    await new Promise((resolve) => setImmediate(resolve));
    asked.input.write('\u0003');
    await expect(confirm).rejects.toMatchObject({ exitCode: 130 });
  });

  it('a question never passes a control character to the terminal', async () => {
    const { term, input, seen } = fakeTerminal();
    const answer = term.confirm('Delete project "x\u001b]0;owned\u0007" (p1)?', '--yes');
    await new Promise((resolve) => setImmediate(resolve));
    input.write('n\r');
    expect(await answer).toBe(false);
    expect(seen()).toContain('Delete project "x\uFFFD]0;owned\uFFFD" (p1)? [y/N]');
    // readline moves its own cursor with CSI sequences; the name brings no OSC or bell.
    expect(seen()).not.toMatch(/\u0007|\u001b\]/);
  });

  it('confirms on y or yes only', async () => {
    for (const [typed, expected] of [['y', true], ['YES', true], ['', false], ['n', false], ['yep', false]] as const) {
      const { term, input } = fakeTerminal();
      const answer = term.confirm('Delete it?', '--yes');
      await new Promise((resolve) => setImmediate(resolve));
      input.write(`${typed}\r`);
      expect(await answer, typed).toBe(expected);
    }
  });

  it('without a terminal asks nothing and names the flag to use', async () => {
    const { term } = fakeTerminal(false);
    await expect(term.confirm('Delete project "x"?', '--yes')).rejects.toThrow(UsageError);
    await expect(term.confirm('Delete project "x"?', '--yes')).rejects.toThrow(/add --yes to go ahead/);
  });

  it('reads all of standard input, less one trailing newline', async () => {
    const { term, input } = fakeTerminal(false);
    const all = term.readStdin();
    input.end('pass phrase with  spaces \n');
    expect(await all).toBe('pass phrase with  spaces ');
  });
});
