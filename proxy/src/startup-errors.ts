import { StartupError } from '@gateway/shared';

/**
 * Start-up failures an operator fixes with a setting: one line naming the setting (runService
 * prints a StartupError's message alone), never the listener's stack.
 */
export function metricsPortError(port: number, err: Error): StartupError {
  const busy = (err as NodeJS.ErrnoException).code === 'EADDRINUSE';
  const why = busy ? 'it is already in use' : err.message;
  return new StartupError(`the proxy could not open its metrics port ${port} (${why}); set METRICS_PORT to a free port, or 0 for any`);
}

export function proxyPortError(host: string, port: number): StartupError {
  return new StartupError(`the proxy could not listen on ${host}:${port} (in use, or not an address of this host); set PROXY_PORT or PROXY_HOST`);
}
