import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

/**
 * Builds the dashboard into dist/, which the control plane serves at `/`. JSX goes through
 * Vite's own transform with Preact as the runtime: the Preact preset would add Babel and
 * hot-refresh machinery that a production build never uses.
 *
 * `npx vite control-plane/dashboard` serves it with live reload, sending the API calls to a
 * control plane on CONTROL_URL (default http://127.0.0.1:8081).
 */
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // Nothing as data: URLs, so every asset is a hashed file the server can cache forever.
    assetsInlineLimit: 0,
  },
  server: {
    proxy: { '/v1': process.env.CONTROL_URL ?? 'http://127.0.0.1:8081' },
  },
});
