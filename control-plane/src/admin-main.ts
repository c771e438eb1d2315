import { ConfigError, DEFAULT_DATABASE_URL, envUrl, StartupError } from '@gateway/shared';
import { createAdmin, linkSso, RecoveryError, resetPassword, unlinkSso } from './account-recovery.js';
import { generatePassword, passwordProblem } from './auth/password-policy.js';
import { connectDb, type Db } from './db/connect.js';
import { migrate } from './db/migrate.js';

/**
 * `npm run admin -- <command>`: account recovery where DATABASE_URL is reachable.
 *
 *   reset-password <email> [--password-stdin]   set a new password, enable the account, end its sessions
 *   create-admin <email> [--password-stdin]     create an account admin
 *   link-sso <email> <issuer> <subject>         bind the account to that single sign-on identity
 *   unlink-sso <email>                          remove the account's single sign-on bindings, end its sessions
 *
 * Without --password-stdin a strong password is generated and printed once on stdout (this is an
 * operator's terminal, not a log); with it, the password is read from standard input.
 */
const USAGE =
  'usage: npm run admin -- reset-password|create-admin <email> [--password-stdin] | link-sso <email> <issuer> <subject> | unlink-sso <email>';
const EMAIL = /^[^\s@]+@[^\s@]+$/;

interface PasswordCommand {
  name: 'reset-password' | 'create-admin';
  email: string;
  passwordFromStdin: boolean;
}

type Command = PasswordCommand | { name: 'link-sso'; email: string; issuer: string; subject: string } | { name: 'unlink-sso'; email: string };

/** A command with its password, once read or generated and checked against the policy. */
type Ready = Exclude<Command, PasswordCommand> | (PasswordCommand & { password: string });

function parse(argv: string[]): Command {
  const flags = argv.filter((a) => a.startsWith('--'));
  const words = argv.filter((a) => !a.startsWith('--'));
  const unknown = flags.filter((f) => f !== '--password-stdin');
  if (unknown.length > 0) throw new ConfigError(`unknown option ${unknown[0]}; ${USAGE}`);
  const [name, email, ...rest] = words;
  const known = name === 'reset-password' || name === 'create-admin' || name === 'link-sso' || name === 'unlink-sso';
  if (!known || email === undefined) throw new ConfigError(USAGE);
  if (!EMAIL.test(email)) throw new ConfigError(`"${email}" is not an email address`);
  const passwordFromStdin = flags.includes('--password-stdin');
  if ((name === 'reset-password' || name === 'create-admin') && rest.length === 0) return { name, email, passwordFromStdin };
  if (passwordFromStdin) throw new ConfigError(`${name} sets no password; ${USAGE}`);
  if (name === 'unlink-sso' && rest.length === 0) return { name, email };
  const [issuer, subject] = rest;
  if (name === 'link-sso' && issuer !== undefined && subject !== undefined && rest.length === 2) {
    if (!URL.canParse(issuer)) throw new ConfigError(`"${issuer}" is not an issuer URL (the identity provider's, as the control plane logged it)`);
    return { name, email, issuer, subject };
  }
  throw new ConfigError(USAGE);
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  // One trailing newline is how `echo` and here-strings end; anything else is the password's.
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}

async function withPassword(command: Command): Promise<Ready> {
  if (!('passwordFromStdin' in command)) return command;
  const password = command.passwordFromStdin ? await readStdin() : generatePassword();
  const problem = passwordProblem(password, command.email);
  if (problem !== null) throw new ConfigError(`the password ${problem}`);
  return { ...command, password };
}

/** Runs the command; returns what to print. */
async function run(sql: Db, command: Ready): Promise<string> {
  switch (command.name) {
    case 'link-sso': {
      const { linked } = await linkSso(sql, command.email, command);
      return linked ? `${command.email} linked to the identity ${command.subject} of ${command.issuer}.\n` : `${command.email} was already linked to that identity; nothing changed.\n`;
    }
    case 'unlink-sso': {
      const { unlinked } = await unlinkSso(sql, command.email);
      return unlinked === 0
        ? `${command.email} was linked to no single sign-on identity; nothing changed.\n`
        : `Single sign-on unlinked from ${command.email}; every session it had is ended. Its next sign-in with a verified email links it again.\n`;
    }
    case 'reset-password': {
      const { wasDisabled } = await resetPassword(sql, command.email, command.password);
      return `Password of ${command.email} reset${wasDisabled ? ', account enabled' : ''}; every session it had is ended.\n`;
    }
    case 'create-admin':
      await createAdmin(sql, command.email, command.password);
      return `Account admin ${command.email} created.\n`;
  }
}

try {
  const command = await withPassword(parse(process.argv.slice(2)));
  const env = process.env;
  const sql = await connectDb(envUrl(env, 'DATABASE_URL', DEFAULT_DATABASE_URL, ['postgres:', 'postgresql:']), { max: 1 });
  try {
    // A database from an older version gets the columns this needs.
    await migrate(sql);
    process.stdout.write(await run(sql, command));
    if ('password' in command && !command.passwordFromStdin) process.stdout.write(`New password (shown once): ${command.password}\n`);
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
