import { chmod, mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { UsageError } from './cli-errors.js';

/**
 * Where gatewayctl keeps the control plane's URL and the signed-in token: `$GATEWAYCTL_CONFIG`,
 * or ~/.config/gatewayctl/config.json. The token is a credential, so the file is written owner-only
 * (0600) and the default directory is 0700, whatever the umask.
 */
export interface StoredConfig {
  /** Base URL of the control plane, without a trailing slash. */
  url: string;
  /** The email last signed in with, offered again by `login`. */
  email?: string;
  token?: string;
  /** When the token expires, Unix ms. */
  expires_at?: number;
  /** Set once a refresh came back shorter than a full token: the session ends then and refreshing gains nothing. */
  session_ends_at?: number;
}

export function configPath(env: NodeJS.ProcessEnv): { path: string; ownDirectory: boolean } {
  const chosen = env.GATEWAYCTL_CONFIG;
  if (chosen !== undefined && chosen !== '') return { path: chosen, ownDirectory: false };
  return { path: join(homedir(), '.config', 'gatewayctl', 'config.json'), ownDirectory: true };
}

export async function readConfig(path: string): Promise<StoredConfig | null> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new UsageError(`cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new UsageError(`${path} is not valid JSON; delete it and sign in again`);
  }
  if (typeof parsed !== 'object' || parsed === null || typeof (parsed as StoredConfig).url !== 'string') {
    throw new UsageError(`${path} does not hold a gatewayctl configuration; delete it and sign in again`);
  }
  return parsed as StoredConfig;
}

/**
 * Replaces the file whole: written under a temporary name with mode 0600 and renamed into place,
 * so neither a crash nor an old file with looser permissions ever leaves the token readable by others.
 */
export async function writeConfig(location: { path: string; ownDirectory: boolean }, config: StoredConfig): Promise<void> {
  const dir = dirname(location.path);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  // Only the directory gatewayctl owns: $GATEWAYCTL_CONFIG may well sit in a shared one.
  if (location.ownDirectory) await chmod(dir, 0o700);
  const staging = `${location.path}.${process.pid}.tmp`;
  const file = await open(staging, 'w', 0o600);
  try {
    await file.chmod(0o600);
    await file.writeFile(`${JSON.stringify(config, null, 2)}\n`);
    await file.sync();
  } finally {
    await file.close();
  }
  try {
    await rename(staging, location.path);
  } catch (err) {
    await rm(staging, { force: true });
    throw err;
  }
}
