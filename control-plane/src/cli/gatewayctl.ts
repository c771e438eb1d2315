#!/usr/bin/env node
import { run } from './run.js';
import { processTerminal } from './terminal.js';

/** `gatewayctl`: see docs/gatewayctl.md. */

// `gatewayctl audit --all | head`: a reader that has had enough is no error.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});

process.exitCode = await run(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  term: processTerminal(),
  env: process.env,
  now: Date.now,
});
