import type { Readable } from 'node:stream';
import busboy from 'busboy';
import { Errors, GatewayError, type FileRow } from '@gateway/shared';
import type { Exchange } from '../http/exchange.js';
import type { BatchStore } from './batch-store.js';
import { JsonlSplitter } from './jsonl-splitter.js';
import { checkLine, FILE_ENDPOINTS, LineTally } from './line-check.js';

/**
 * POST /v1/files (multipart/form-data, `purpose=batch`, `file`), streamed: the file part is cut
 * into lines as it arrives, each line checked (line-check.ts) and sent on to the control plane in
 * pages, so the proxy holds one page and one socket chunk, never the file. While a page is being
 * stored the socket is not read (backpressure to the client). Limits are enforced while reading:
 * BATCH_FILE_MAX_BYTES on the file's bytes, BATCH_MAX_LINES on its lines. A refusal deletes what
 * was stored of the file; nothing of it is ever listed or readable.
 */
const PAGE_LINES = 2_000;
const PAGE_BYTES = 4 * 1024 * 1024;

export interface UploadLimits {
  maxBytes: number;
  maxLines: number;
}

export class FileUpload {
  /** Chunks that came before the upload was started (the key was being checked). */
  private early: { chunk: Buffer; last: boolean }[] = [];
  private feed: ((chunk: Buffer, last: boolean) => void) | null = null;

  constructor(
    private readonly ex: Exchange,
    private readonly contentType: string,
    private readonly limits: UploadLimits,
  ) {}

  /** Takes the body over (inside the request callback) and holds it until start(). */
  receive(): void {
    this.ex.pauseBody();
    this.ex.streamBody((chunk, last) => {
      if (this.feed !== null) this.feed(chunk, last);
      else this.early.push({ chunk, last });
    });
  }

  /** Stores the upload as a file of the key's project; resolves with the file once every line is in. */
  start(store: BatchStore, projectId: string, keyId: string): Promise<FileRow> {
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: { 'content-type': this.contentType }, limits: { files: 1, fields: 16, fieldSize: 64 * 1024, fileSize: this.limits.maxBytes } });
    } catch {
      return Promise.reject(Errors.badUpload('the body must be multipart/form-data with a boundary'));
    }
    return new Promise<FileRow>((resolve, reject) => {
      const run = new UploadRun(this.ex, store, projectId, keyId, this.limits, resolve, reject);
      run.attach(parser);
      this.feed = (chunk, last) => run.write(parser, chunk, last);
      const early = this.early;
      this.early = [];
      for (const { chunk, last } of early) this.feed(chunk, last);
      this.ex.resumeBody();
    });
  }
}

/** One upload in progress: the parser's events, the page being filled and the control plane's calls. */
class UploadRun {
  private purpose: string | null = null;
  private filename = 'batch.jsonl';
  private sawFile = false;
  private readonly tally = new LineTally();
  private bytes = 0;
  private page: string[] = [];
  private pageBytes = 0;
  private firstLine = 0;
  private fileId: Promise<string> | null = null;
  /** The page being stored; the file part and the socket wait for it. */
  private storing: Promise<void> | null = null;
  private fileStream: Readable | null = null;
  private done = false;

  constructor(
    private readonly ex: Exchange,
    private readonly store: BatchStore,
    private readonly projectId: string,
    private readonly keyId: string,
    private readonly limits: UploadLimits,
    private readonly resolve: (file: FileRow) => void,
    private readonly reject: (err: GatewayError) => void,
  ) {}

  write(parser: busboy.Busboy, chunk: Buffer, last: boolean): void {
    if (this.done) return;
    parser.write(chunk);
    if (last) parser.end();
  }

  attach(parser: busboy.Busboy): void {
    const splitter = new JsonlSplitter((text, lineNumber) => this.line(text, lineNumber));
    parser.on('field', (name, value) => {
      if (name === 'purpose') this.purpose = value;
    });
    parser.on('file', (name, stream, info) => {
      if (name !== 'file' || this.sawFile) {
        stream.resume();
        return;
      }
      this.sawFile = true;
      this.fileStream = stream;
      if (info.filename) this.filename = info.filename.slice(0, 255);
      stream.on('data', (chunk: Buffer) => {
        if (this.done) return;
        this.bytes += chunk.length;
        splitter.push(chunk);
      });
      stream.on('limit', () => this.fail(Errors.batchFileTooLarge(this.limits.maxBytes)));
      stream.on('end', () => {
        if (this.done) return;
        splitter.end();
      });
    });
    parser.on('filesLimit', () => this.fail(Errors.badUpload('send one file, as the `file` field')));
    parser.on('error', () => this.fail(Errors.badUpload('the multipart body could not be read')));
    parser.on('close', () => void this.finish());
  }

  private line(text: string, lineNumber: number): void {
    if (this.done) return;
    // Blank lines (a trailing newline, an editor's empty last line) hold no request.
    if (text.trim() === '') return;
    const checked = checkLine(text, lineNumber, FILE_ENDPOINTS);
    if (checked instanceof GatewayError) return this.fail(checked);
    const repeated = this.tally.add(checked, lineNumber);
    if (repeated !== null) return this.fail(repeated);
    if (this.tally.lines > this.limits.maxLines) return this.fail(Errors.batchTooManyLines(this.limits.maxLines));
    this.page.push(text);
    this.pageBytes += text.length;
    if (this.page.length >= PAGE_LINES || this.pageBytes >= PAGE_BYTES) this.flush();
  }

  private opened(): Promise<string> {
    return (this.fileId ??= this.store.createFile({ project_id: this.projectId, key_id: this.keyId, purpose: 'batch', filename: this.filename }).then((file) => file.id));
  }

  /** Sends the page; the file part and the socket are not read until it is stored. */
  private flush(): void {
    if (this.page.length === 0) return;
    const lines = this.page;
    const firstLine = this.firstLine;
    this.page = [];
    this.pageBytes = 0;
    this.firstLine += lines.length;
    const previous = this.storing;
    this.fileStream?.pause();
    this.ex.pauseBody();
    const storing = (async () => {
      await previous;
      const id = await this.opened();
      await this.store.appendLines(id, { project_id: this.projectId, first_line: firstLine, lines });
    })();
    this.storing = storing;
    storing.then(
      () => {
        if (this.storing !== storing || this.done) return;
        this.storing = null;
        this.fileStream?.resume();
        this.ex.resumeBody();
      },
      (err: unknown) => this.fail(asGatewayError(err)),
    );
  }

  private async finish(): Promise<void> {
    if (this.done) return;
    if (!this.sawFile) return this.fail(Errors.badUpload('the `file` field is missing'));
    if (this.purpose !== 'batch') return this.fail(Errors.invalidField('purpose', this.purpose === null ? '`purpose` is required: "batch".' : 'Only files of purpose "batch" are taken.'));
    if (this.tally.lines === 0) return this.fail(Errors.batchFileEmpty());
    this.flush();
    try {
      await this.storing;
      if (this.done) return;
      const id = await this.opened();
      const file = await this.store.completeFile(id, { project_id: this.projectId, bytes: this.bytes, line_count: this.tally.lines, endpoints: this.tally.endpoints });
      this.done = true;
      this.resolve(file);
    } catch (err) {
      this.fail(asGatewayError(err));
    }
  }

  private fail(err: GatewayError): void {
    if (this.done) return;
    this.done = true;
    this.page = [];
    this.fileStream?.resume();
    this.ex.discardBody();
    this.ex.resumeBody();
    // What was stored of the file goes; an upload the control plane never opened left nothing.
    const opened = this.fileId;
    if (opened !== null) void opened.then((id) => this.store.deleteFile(id, this.projectId)).catch(() => {});
    this.reject(err);
  }
}

function asGatewayError(err: unknown): GatewayError {
  return err instanceof GatewayError ? err : Errors.batchStoreUnavailable('no answer');
}
