import { ConfigError, DEFAULT_DATABASE_URL, envUrl, StartupError } from '@gateway/shared';
import { createAdmin, RecoveryError, resetPassword } from './account-recovery.js';
import { generatePassword, passwordProblem } from './auth/password-policy.js';
import { connectDb } from './db/connect.js';
import { migrate } from './db/migrate.js';

/**
 * `npm run admin -- <command>`: account recovery where DATABASE_URL is reachable.
 *
 *   reset-password <email> [--password-stdin]   set a new password, enable the account, end its sessions
 *   create-admin <email> [--password-stdin]     create an account admin
 *
 * Without --password-stdin a strong password is generated and printed once on stdout (this is an
 * operator's terminal, not a log); with it, the password is read from standard input.
 */
const USAGE = 'usage: npm run admin -- reset-password|create-admin <email> [--password-stdin]';
const EMAIL = /^[^\s@]+@[^\s@]+$/;

interface Command {
  name: 'reset-password' | 'create-admin';
  email: string;
  passwordFromStdin: boolean;
}

function parse(argv: string[]): Command {
  const flags = argv.filter((a) => a.startsWith('--'));
  const words = argv.filter((a) => !a.startsWith('--'));
  const unknown = flags.filter((f) => f !== '--password-stdin');
  if (unknown.length > 0) throw new ConfigError(`unknown option ${unknown[0]}; ${USAGE}`);
  const [name, email, ...rest] = words;
  if ((name !== 'reset-password' && name !== 'create-admin') || email === undefined || rest.length > 0) throw new ConfigError(USAGE);
  if (!EMAIL.test(email)) throw new ConfigError(`"${email}" is not an email address`);
  return { name, email, passwordFromStdin: flags.includes('--password-stdin') };
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  // One trailing newline is how `echo` and here-strings end; anything else is the password's.
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}

try {
  const command = parse(process.argv.slice(2));
  const password = command.passwordFromStdin ? await readStdin() : generatePassword();
  const problem = passwordProblem(password, command.email);
  if (problem !== null) throw new ConfigError(`the password ${problem}`);
  const env = process.env;
  const sql = await connectDb(envUrl(env, 'DATABASE_URL', DEFAULT_DATABASE_URL, ['postgres:', 'postgresql:']), { max: 1 });
  try {
    // A database from an older version gets the columns this needs.
    await migrate(sql);
    if (command.name === 'reset-password') {
      const { wasDisabled } = await resetPassword(sql, command.email, password);
      process.stdout.write(`Password of ${command.email} reset${wasDisabled ? ', account enabled' : ''}; every session it had is ended.\n`);
    } else {
      await createAdmin(sql, command.email, password);
      process.stdout.write(`Account admin ${command.email} created.\n`);
    }
    if (!command.passwordFromStdin) process.stdout.write(`New password (shown once): ${password}\n`);
  } finally {
    await sql.end({ timeout: 5 });
  }
} catch (err) {
  if (err instanceof ConfigError || err instanceof StartupError || err instanceof RecoveryError) {
    process.stderr.write(`admin: ${err.message}\n`);
    process.exit(1);
  }
  throw err;
}
