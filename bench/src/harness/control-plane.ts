import { randomBytes } from 'node:crypto';
import type { RunContext } from './context.js';
import { freePort, spawnNode, waitForHttp, type Child } from './processes.js';

/**
 * A control plane in its own process, on a throwaway database, with an admin account whose
 * password exists only in this process's memory.
 */
export interface ControlPlane {
  child: Child;
  origin: string;
  token: string;
  /** A management API call with the admin's token; throws unless the status is `expect`. */
  call<T>(method: string, path: string, body?: unknown, expect?: number): Promise<T>;
  stop(): Promise<void>;
}

export async function startControlPlane(ctx: RunContext, databaseUrl: string, prefix: string, env: Record<string, string> = {}): Promise<ControlPlane> {
  const port = await freePort();
  const email = 'bench-admin@localhost';
  const password = randomBytes(18).toString('base64url');
  const child = spawnNode('control plane', 'control-plane/dist/main.js', [], {
    env: {
      CONTROL_HOST: '127.0.0.1',
      CONTROL_PORT: String(port),
      CONTROL_METRICS_PORT: '0',
      DATABASE_URL: databaseUrl,
      REDIS_URL: ctx.redisUrl,
      REDIS_PREFIX: prefix,
      ADMIN_EMAIL: email,
      ADMIN_PASSWORD: password,
      JWT_SECRET: randomBytes(48).toString('base64url'),
      DEMO_SEED: 'false',
      LOG_LEVEL: 'warn',
      ...env,
    },
  });
  const origin = `http://127.0.0.1:${port}`;
  await waitForHttp(`${origin}/readyz`, child, 60_000);
  const signin = await fetch(`${origin}/v1/signins`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ grant_type: 'password', email, password }),
  });
  if (signin.status !== 200) throw new Error(`sign-in failed with ${signin.status}`);
  const { access_token: token } = (await signin.json()) as { access_token: string };
  return {
    child,
    origin,
    token,
    async call<T>(method: string, path: string, body?: unknown, expect = 200): Promise<T> {
      const res = await fetch(`${origin}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      if (res.status !== expect) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
      return (text === '' ? undefined : JSON.parse(text)) as T;
    },
    stop: async () => {
      await child.stop();
    },
  };
}
