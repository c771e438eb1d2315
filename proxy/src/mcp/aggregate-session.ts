/**
 * The aggregate endpoint's session id: the upstream sessions themselves (server → session id and
 * negotiated protocol version) and the project, encoded in the id the client sends back. Any
 * replica can serve any request of the session, and none keeps anything another needs. The
 * project is checked on every request, so a session id is worthless to another project's key;
 * the upstream session ids it carries were the client's to know anyway.
 */
export interface AggregateSession {
  project: string;
  servers: Map<string, { sessionId: string; protocolVersion: string }>;
}

const PREFIX = 'gw1.';

export function encodeSession(session: AggregateSession): string {
  const servers: Record<string, [string, string]> = {};
  for (const [name, s] of session.servers) servers[name] = [s.sessionId, s.protocolVersion];
  return PREFIX + Buffer.from(JSON.stringify({ p: session.project, s: servers })).toString('base64url');
}

/** The session, or null when the id is not one of ours or belongs to another project. */
export function decodeSession(id: string, project: string): AggregateSession | null {
  if (!id.startsWith(PREFIX) || id.length > 16_384) return null;
  try {
    const raw = JSON.parse(Buffer.from(id.slice(PREFIX.length), 'base64url').toString('utf8')) as { p?: unknown; s?: unknown };
    if (raw.p !== project || typeof raw.s !== 'object' || raw.s === null) return null;
    const servers = new Map<string, { sessionId: string; protocolVersion: string }>();
    for (const [name, value] of Object.entries(raw.s as Record<string, unknown>)) {
      if (!Array.isArray(value) || typeof value[0] !== 'string' || typeof value[1] !== 'string') return null;
      servers.set(name, { sessionId: value[0], protocolVersion: value[1] });
    }
    return { project, servers };
  } catch {
    return null;
  }
}
