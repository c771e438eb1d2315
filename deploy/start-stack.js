#!/usr/bin/env node
// `npm start`: the whole stack on one machine, as three processes. The control plane goes first
// (it creates and migrates the database, rebuilds the key projection and seeds the demo), then the
// proxy and the writer. One dying takes the others down, so a half-started stack never lingers;
// SIGINT/SIGTERM are passed on so each drains.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
// One proxy worker unless asked: the whole stack shares this machine in development.
const env = { PROXY_WORKERS: '1', ...process.env };
const controlPort = env.CONTROL_PORT ?? '8081';
// The proxy follows the control plane's invalidation log (the second invalidation channel); the
// two share a token, generated for this start unless one is given.
env.INTERNAL_TOKEN ??= randomBytes(32).toString('base64url');
env.CONTROL_PLANE_URL ??= `http://127.0.0.1:${controlPort}`;

const children = new Map();
let stopping = false;

function start(name, script) {
  const child = spawn(process.execPath, [script], { cwd: root, env, stdio: 'inherit' });
  children.set(name, child);
  child.on('exit', (code, signal) => {
    children.delete(name);
    if (!stopping) {
      process.stderr.write(`${name} exited (${signal ?? code}); stopping the stack\n`);
      stop(code === 0 ? 1 : code ?? 1);
    } else if (children.size === 0) {
      process.exit(exitCode);
    }
  });
  return child;
}

let exitCode = 0;
function stop(code = 0) {
  if (stopping) return;
  stopping = true;
  exitCode = code;
  if (children.size === 0) process.exit(code);
  for (const child of children.values()) child.kill('SIGTERM');
  setTimeout(() => {
    for (const child of children.values()) child.kill('SIGKILL');
    process.exit(code || 1);
  }, 20_000).unref();
}

process.on('SIGINT', () => stop(0));
process.on('SIGTERM', () => stop(0));

async function waitReady(url, child) {
  for (;;) {
    if (child.exitCode !== null || stopping) return false;
    try {
      const res = await fetch(url);
      if (res.ok) return true;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

const controlPlane = start('control-plane', 'control-plane/dist/main.js');
if (await waitReady(`http://127.0.0.1:${controlPort}/healthz`, controlPlane)) {
  start('proxy', 'proxy/dist/main.js');
  start('writer', 'control-plane/dist/writer-main.js');
}
