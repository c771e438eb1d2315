#!/usr/bin/env node
// `npm start`: the whole stack on one machine, as three processes run from their build (`npm
// start` builds first). The control plane goes first (it creates and migrates the database,
// rebuilds the key projection and seeds the demo), then the proxy and the writer. A process that
// fails its first start stops the stack (its message says what to fix); one that exits after it
// was up is started again with a growing pause, the rest of the stack serving on. SIGINT/SIGTERM
// are passed on so each drains. Log lines are shortened for a terminal (log-lines.js).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { createLogFormatter } from './log-lines.js';

const root = fileURLToPath(new URL('..', import.meta.url));
// One proxy worker unless asked: the whole stack shares this machine in development.
const env = { PROXY_WORKERS: '1', ...process.env };
const controlPort = env.CONTROL_PORT || '8081';
const proxyPort = env.PROXY_PORT || '8080';
const writerPort = env.WRITER_PORT || '8082';
// The proxy follows the control plane's invalidation log (the second invalidation channel); the
// two share a token, generated for this start unless one is given.
env.INTERNAL_TOKEN ??= randomBytes(32).toString('base64url');
env.CONTROL_PLANE_URL ??= `http://127.0.0.1:${controlPort}`;

/** Restart pauses: 0.5 s doubling to 30 s, back to 0.5 s once a process has run for a minute. */
const FIRST_DELAY_MS = 500;
const MAX_DELAY_MS = 30_000;
const STABLE_AFTER_MS = 60_000;
/** A process without a health URL counts as up once it has run this long. */
const UP_WITHOUT_HEALTH_MS = 5_000;

const SERVICES = {
  'control-plane': { script: 'control-plane/dist/main.js', health: `http://127.0.0.1:${controlPort}/healthz` },
  proxy: { script: 'proxy/dist/main.js', health: `http://127.0.0.1:${proxyPort}/healthz` },
  writer: { script: 'control-plane/dist/writer-main.js', health: writerPort === '0' ? null : `http://127.0.0.1:${writerPort}/healthz` },
};

const missing = Object.values(SERVICES).filter((s) => !existsSync(new URL(`../${s.script}`, import.meta.url)));
if (missing.length > 0) {
  process.stderr.write(`start-stack: ${missing[0].script} is missing; run npm run build first (npm start does).\n`);
  process.exit(1);
}

const supervised = new Map();
let stopping = false;
let exitCode = 0;

function note(message) {
  process.stderr.write(`${clock()} stack         ${message}\n`);
}

function clock() {
  const d = new Date();
  return [d.getHours(), d.getMinutes(), d.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':');
}

/** One service kept running: started, watched until it is up, started again when it exits. */
function supervise(name) {
  const service = { name, ...SERVICES[name], child: null, everUp: false, up: null, startedAt: 0, delayMs: FIRST_DELAY_MS, timer: null };
  supervised.set(name, service);
  run(service);
  return service;
}

function run(service) {
  service.timer = null;
  service.startedAt = Date.now();
  const child = spawn(process.execPath, [service.script], { cwd: root, env, stdio: ['ignore', 'pipe', 'inherit'] });
  service.child = child;
  const format = createLogFormatter(service.name);
  createInterface({ input: child.stdout }).on('line', (line) => {
    const shown = format(line);
    if (shown !== null) process.stdout.write(`${shown}\n`);
  });
  service.up = waitUp(service, child).then((up) => {
    if (up) service.everUp = true;
    return up;
  });
  child.on('exit', (code, signal) => exited(service, child, code, signal));
}

function exited(service, child, code, signal) {
  if (service.child === child) service.child = null;
  const why = signal ?? `code ${code}`;
  if (stopping) {
    if ([...supervised.values()].every((s) => s.child === null)) process.exit(exitCode);
    return;
  }
  if (!service.everUp) {
    note(`${service.name} exited (${why}) before it was up; stopping the stack`);
    stop(code === 0 || code === null ? 1 : code);
    return;
  }
  if (Date.now() - service.startedAt >= STABLE_AFTER_MS) service.delayMs = FIRST_DELAY_MS;
  note(`${service.name} exited (${why}); restarting in ${service.delayMs / 1000} s`);
  service.timer = setTimeout(() => run(service), service.delayMs);
  service.delayMs = Math.min(service.delayMs * 2, MAX_DELAY_MS);
}

/** True once the process answers its health URL (or has run a while, without one); false if it exits first. */
async function waitUp(service, child) {
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null || stopping) return false;
    if (service.health === null) {
      if (Date.now() - service.startedAt >= UP_WITHOUT_HEALTH_MS) return true;
    } else {
      try {
        if ((await fetch(service.health)).ok) return true;
      } catch {
        // not listening yet
      }
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

function stop(code = 0) {
  if (stopping) return;
  stopping = true;
  exitCode = code;
  for (const service of supervised.values()) {
    if (service.timer !== null) clearTimeout(service.timer);
    service.child?.kill('SIGTERM');
  }
  if ([...supervised.values()].every((s) => s.child === null)) process.exit(code);
  setTimeout(() => {
    for (const service of supervised.values()) service.child?.kill('SIGKILL');
    process.exit(code || 1);
  }, 20_000).unref();
}

process.on('SIGINT', () => stop(0));
process.on('SIGTERM', () => stop(0));

const controlPlane = supervise('control-plane');
if (await controlPlane.up) {
  const rest = [supervise('proxy'), supervise('writer')];
  if ((await Promise.all(rest.map((s) => s.up))).every(Boolean) && !stopping) {
    const bar = '-'.repeat(72);
    process.stdout.write(
      `\n${bar}\nGateway running (Ctrl-C stops it):\n` +
        `  Dashboard       http://127.0.0.1:${controlPort}/\n` +
        `  Gateway API     http://127.0.0.1:${proxyPort}/v1  (OpenAI and Anthropic SDKs, project API keys)\n` +
        `  Management API  http://127.0.0.1:${controlPort}/v1  (OpenAPI: /openapi.json)\n${bar}\n\n`,
    );
  }
}
