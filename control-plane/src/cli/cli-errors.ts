/**
 * What gatewayctl's exit status means, so scripts can tell a refused request from a typo, an
 * expired sign-in or a server that is down. Every failure leaves through one of these errors;
 * their messages never hold a token or a password.
 */
export const EXIT = {
  ok: 0,
  /** The API answered with an error (its message and code are printed). */
  api: 1,
  /** Bad flags or arguments; nothing was sent. */
  usage: 2,
  /** Not signed in, or the token was refused. */
  auth: 3,
  /** The server could not be reached. */
  unreachable: 4,
  /** Ctrl-C at a prompt (128 + SIGINT, as shells report it). */
  interrupted: 130,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

export class UsageError extends CliError {
  constructor(message: string) {
    super(message, EXIT.usage);
  }
}

export class AuthError extends CliError {
  constructor(message: string) {
    super(message, EXIT.auth);
  }
}

export class UnreachableError extends CliError {
  constructor(message: string) {
    super(message, EXIT.unreachable);
  }
}

/** An error answer of the API, or a lookup the CLI made on its behalf that found nothing. */
export class ApiError extends CliError {
  constructor(
    message: string,
    readonly code: string,
    readonly status: number | null,
  ) {
    super(message, EXIT.api);
  }
}
