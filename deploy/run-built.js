#!/usr/bin/env node
// `npm run start:proxy` and the other scripts: run a service from its build, without building
// (`npm run build` is its own step, done once by `npm start`, CI or an image build), so a replica
// starts in well under a second. Without a build, say so rather than print a module-not-found
// stack trace.
//
//   node deploy/run-built.js proxy/dist/main.js [args…]
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const BUILD_FIRST = 'run npm run build first';
const root = fileURLToPath(new URL('..', import.meta.url));
const [script, ...args] = process.argv.slice(2);
if (script === undefined) {
  process.stderr.write('usage: node deploy/run-built.js <workspace>/dist/<file>.js [args…]\n');
  process.exit(2);
}
const path = fileURLToPath(new URL(script, pathToFileURL(root)));
if (!existsSync(path)) {
  process.stderr.write(`${script} is not built; ${BUILD_FIRST}.\n`);
  process.exit(1);
}
// The service reads its arguments as if started directly: node <script> [args…].
process.argv.splice(1, process.argv.length - 1, path, ...args);
try {
  await import(pathToFileURL(path).href);
} catch (err) {
  // A workspace it imports (shared/dist, …) not built, or built by an older version.
  if (err?.code === 'ERR_MODULE_NOT_FOUND' && /\/dist\//.test(String(err.message))) {
    process.stderr.write(`${script}: ${String(err.message).split('\n')[0]}; ${BUILD_FIRST}.\n`);
    process.exit(1);
  }
  throw err;
}
