/**
 * Cuts a byte stream into lines at `\n` (a `\r` before it dropped), whatever the chunk borders:
 * only the line being read is held, never the file. Each line comes out as UTF-8 text with its
 * number from 1, as an editor shows it, so a refusal can name it.
 */
export class JsonlSplitter {
  private carry: Buffer[] = [];
  private carried = 0;
  private line = 0;

  constructor(private readonly onLine: (text: string, lineNumber: number) => void) {}

  push(chunk: Buffer): void {
    let start = 0;
    for (;;) {
      const at = chunk.indexOf(0x0a, start);
      if (at === -1) break;
      this.emit(chunk.subarray(start, at));
      start = at + 1;
    }
    if (start < chunk.length) {
      // Copied: the caller may reuse the chunk's memory.
      const rest = Buffer.from(chunk.subarray(start));
      this.carry.push(rest);
      this.carried += rest.length;
    }
  }

  /** The last line, when the stream does not end with a newline. */
  end(): void {
    if (this.carried > 0) this.emit(Buffer.alloc(0));
  }

  /** Bytes of a line not finished yet (a single line larger than a file may be is refused by the caller's byte limit). */
  get pending(): number {
    return this.carried;
  }

  private emit(tail: Buffer): void {
    let bytes = tail;
    if (this.carry.length > 0) {
      bytes = Buffer.concat([...this.carry, tail]);
      this.carry = [];
      this.carried = 0;
    }
    const end = bytes.length > 0 && bytes[bytes.length - 1] === 0x0d ? bytes.length - 1 : bytes.length;
    this.line++;
    this.onLine(bytes.toString('utf8', 0, end), this.line);
  }
}
