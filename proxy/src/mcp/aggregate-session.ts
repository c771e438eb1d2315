import type { SessionSigner } from './session-signer.js';

/**
 * The aggregate endpoint's session id: the upstream sessions themselves (server → session id and
 * negotiated protocol version), the project and the key, encoded in the id the client sends back
 * and signed (session-signer.ts). Any replica can serve any request of the session, and none
 * keeps anything another needs. The signature means a client cannot add a server to its session
 * or change what it holds; the project and key are checked on every request, so a session id is
 * worthless to another key; the upstream session ids it carries were the client's to know anyway.
 */
export interface AggregateSession {
  project: string;
  key: string;
  servers: Map<string, { sessionId: string; protocolVersion: string }>;
}

const PREFIX = 'gw2.';

export function encodeSession(session: AggregateSession, signer: SessionSigner): string {
  const servers: Record<string, [string, string]> = {};
  for (const [name, s] of session.servers) servers[name] = [s.sessionId, s.protocolVersion];
  const payload = Buffer.from(JSON.stringify({ p: session.project, k: session.key, s: servers })).toString('base64url');
  return `${PREFIX}${payload}.${signer.sign(payload)}`;
}

/** The session, or null when the id is not one of ours, was altered, or belongs to another project or key. */
export async function decodeSession(id: string, project: string, key: string, signer: SessionSigner): Promise<AggregateSession | null> {
  if (!id.startsWith(PREFIX) || id.length > 16_384) return null;
  const dot = id.lastIndexOf('.');
  if (dot <= PREFIX.length) return null;
  const payload = id.slice(PREFIX.length, dot);
  if (!(await signer.verify(payload, id.slice(dot + 1)))) return null;
  try {
    const raw = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { p?: unknown; k?: unknown; s?: unknown };
    if (raw.p !== project || raw.k !== key || typeof raw.s !== 'object' || raw.s === null) return null;
    const servers = new Map<string, { sessionId: string; protocolVersion: string }>();
    for (const [name, value] of Object.entries(raw.s as Record<string, unknown>)) {
      if (!Array.isArray(value) || typeof value[0] !== 'string' || typeof value[1] !== 'string') return null;
      servers.set(name, { sessionId: value[0], protocolVersion: value[1] });
    }
    return { project, key, servers };
  } catch {
    return null;
  }
}
