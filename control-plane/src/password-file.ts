import { randomBytes } from 'node:crypto';
import { mkdir, open, rename, unlink } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';

/**
 * A secret written to a file only its owner can read (0600, in a directory made 0700 when it has
 * to be created). Staged under a temporary name first and renamed into place, so the file is
 * either absent or complete, and a file already at that name (from an earlier installation) is
 * replaced whole rather than rewritten with its old, possibly wider, permissions.
 */
export class PasswordFile {
  private constructor(
    private readonly path: string,
    private readonly staged: string,
  ) {}

  static async stage(path: string, secret: string): Promise<PasswordFile> {
    const target = resolve(path);
    await mkdir(dirname(target), { recursive: true, mode: 0o700 });
    const staged = `${target}.${randomBytes(6).toString('hex')}.tmp`;
    const handle = await open(staged, 'wx', 0o600);
    try {
      await handle.writeFile(`${secret}\n`, 'utf8');
    } finally {
      await handle.close();
    }
    return new PasswordFile(target, staged);
  }

  /** Moves the staged file to its name; returns that name, absolute. */
  async publish(): Promise<string> {
    await rename(this.staged, this.path);
    return this.path;
  }

  async discard(): Promise<void> {
    await unlink(this.staged).catch(() => {});
  }
}
