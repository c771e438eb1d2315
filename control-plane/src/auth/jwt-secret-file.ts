import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Logger } from 'pino';
import type { ControlPlaneConfig } from '@gateway/shared';
import { PasswordFile } from '../password-file.js';

/**
 * JWT_SECRET when the environment gives none. In development it is generated once and kept in
 * JWT_SECRET_FILE (mode 0600, in the state directory beside the generated admin password), so a
 * restart does not sign everyone out of the dashboard and gatewayctl. In production a secret
 * nobody set is a mistake: each process makes its own (tokens die with it, replicas refuse each
 * other's), and the warning says so.
 */
export async function jwtSecretOf(config: Pick<ControlPlaneConfig, 'jwtSecret' | 'production' | 'jwtSecretFile'>, log: Logger): Promise<string> {
  if (config.jwtSecret !== undefined) return config.jwtSecret;
  if (config.production) {
    log.warn(
      'JWT_SECRET is not set: signing management tokens with a secret made for this process. Tokens will not survive a ' +
        'restart and other control-plane replicas will refuse them. Set JWT_SECRET (at least 32 bytes).',
    );
    return randomBytes(48).toString('base64url');
  }
  const kept = await readKept(config.jwtSecretFile);
  if (kept !== null) return kept;
  const staged = await PasswordFile.stage(config.jwtSecretFile, randomBytes(48).toString('base64url'));
  const path = await staged.publish();
  // Two processes starting at once each publish one: whichever rename came last is the file, and
  // both read it back so they sign with the same secret.
  const secret = await readKept(path);
  if (secret === null) throw new Error(`could not read back ${path}`);
  log.info({ file: resolve(config.jwtSecretFile) }, 'JWT_SECRET is not set: generated one for development and kept it (mode 0600) so sessions survive a restart');
  return secret;
}

async function readKept(path: string): Promise<string | null> {
  try {
    const text = (await readFile(path, 'utf8')).trim();
    return text === '' ? null : text;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}
