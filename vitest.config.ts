import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: {
    // Tests run the TypeScript sources; the compiled dist/ is for `npm start` and spawned processes.
    // The subpath first: an alias also matches the names it prefixes.
    alias: [
      { find: '@gateway/shared/guardrails', replacement: fileURLToPath(new URL('./shared/src/guardrails/index.ts', import.meta.url)) },
      { find: '@gateway/shared/otel-sdk', replacement: fileURLToPath(new URL('./shared/src/tracing/otel-sdk.ts', import.meta.url)) },
      { find: '@gateway/shared', replacement: fileURLToPath(new URL('./shared/src/index.ts', import.meta.url)) },
    ],
  },
  test: {
    include: ['shared/src/**/*.test.ts', 'proxy/src/**/*.test.ts', 'proxy/test/**/*.test.ts', 'control-plane/src/**/*.test.ts', 'control-plane/test/**/*.test.ts', 'bench/src/**/*.test.ts', 'deploy/**/*.test.ts', 'test-support/**/*.test.ts'],
    pool: 'forks',
    // Sign-ins hash passwords at scrypt's production cost (OWASP: N = 2^17, about 0.3 s of a core
    // each, far more on a busy machine), and many tests sign in several times.
    testTimeout: 90_000,
    hookTimeout: 60_000,
    // Two cores: more parallel files only make the real services contend.
    maxWorkers: 2,
  },
});
