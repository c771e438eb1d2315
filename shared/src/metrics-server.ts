import { createServer, type Server } from 'node:http';

/** What the listener needs of a prom-client Registry (shared itself has no metrics dependency). */
export interface MetricsSource {
  readonly contentType: string;
  metrics(): Promise<string>;
}

export interface MetricsServer {
  port: number;
  close(): Promise<void>;
}

/**
 * A process's operations listener: only what an orchestrator and Prometheus ask of every process
 * (DESIGN §2), kept off public ports. The writer has no other listener; the proxy serves its
 * metrics here so that they are not open on the data plane's public port. `ready` answers
 * whether the process's dependencies respond. Port 0 picks a free port.
 */
export async function startMetricsServer(host: string, port: number, registry: MetricsSource, ready: () => Promise<Record<string, boolean>>): Promise<MetricsServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const send = (status: number, type: string, body: string) => {
      res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
      res.end(body);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, 'application/json', '{"status":"method not allowed"}');
    if (path === '/healthz') return send(200, 'application/json', '{"status":"ok"}');
    if (path === '/readyz') {
      ready().then(
        (checks) => {
          const ok = Object.values(checks).every(Boolean);
          send(ok ? 200 : 503, 'application/json', JSON.stringify({ status: ok ? 'ready' : 'unavailable', ...checks }));
        },
        () => send(503, 'application/json', '{"status":"unavailable"}'),
      );
      return;
    }
    if (path === '/metrics') {
      registry.metrics().then(
        (text) => send(200, registry.contentType, text),
        () => send(500, 'text/plain', 'metrics unavailable\n'),
      );
      return;
    }
    send(404, 'application/json', '{"status":"not found"}');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  return {
    port: typeof address === 'object' && address !== null ? address.port : port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
