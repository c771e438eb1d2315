// Readable console lines for `npm start`. Each service writes pino JSON lines (what a log
// collector wants in production); in development one short line per event is easier to read, and
// the banner with the one-time admin password stays on screen. Lines that are not pino JSON (the
// banners) pass through unchanged. No pino-pretty: it would be a dependency and, as a transport,
// a worker thread in every service.

const LEVELS = { 10: 'TRACE', 20: 'DEBUG', 30: '', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
/** Fields every line has, or that the message already says. */
const OMIT = new Set(['level', 'time', 'pid', 'hostname', 'name', 'msg', 'v', 'reqId', 'req', 'res', 'responseTime', 'err']);
/** The longest service name, so that messages line up. */
const NAME_WIDTH = 'control-plane'.length;
/** Requests whose completion has not been logged yet, by Fastify request id; bounded. */
const PENDING_MAX = 1_000;

/**
 * One formatter per service: it remembers each request's method and URL from Fastify's
 * "incoming request" line to print them with the status on "request completed".
 */
export function createLogFormatter(name) {
  const pending = new Map();
  return (line) => formatLogLine(name, line, pending);
}

/**
 * The console line for one line of a service's output, or null for a line not worth showing
 * (the "incoming request" half of a request).
 */
export function formatLogLine(name, line, pending = new Map()) {
  const entry = parse(line);
  if (entry === null) return line;
  const prefix = `${clock(entry.time)} ${name.padEnd(NAME_WIDTH)} `;
  if (entry.msg === 'incoming request' && entry.req) {
    if (pending.size >= PENDING_MAX) pending.delete(pending.keys().next().value);
    pending.set(entry.reqId, entry.req);
    return null;
  }
  if (entry.msg === 'request completed' && entry.res) {
    const req = pending.get(entry.reqId) ?? {};
    pending.delete(entry.reqId);
    const ms = typeof entry.responseTime === 'number' ? ` ${Math.round(entry.responseTime)}ms` : '';
    return `${prefix}${levelTag(entry.level)}${req.method ?? '?'} ${req.url ?? '?'} ${entry.res.statusCode}${ms}`;
  }
  // The control plane's own one-line request log (control-plane/src/http/request-log.ts).
  if (entry.msg === 'request completed' && typeof entry.method === 'string' && typeof entry.status === 'number') {
    const ms = typeof entry.ms === 'number' ? ` ${Math.round(entry.ms)}ms` : '';
    return `${prefix}${levelTag(entry.level)}${entry.method} ${entry.url ?? '?'} ${entry.status}${ms}`;
  }
  const err = entry.err && typeof entry.err.message === 'string' ? `: ${entry.err.message}` : '';
  return `${prefix}${levelTag(entry.level)}${entry.msg ?? ''}${err}${fields(entry)}`;
}

function parse(line) {
  if (!line.startsWith('{')) return null;
  try {
    const entry = JSON.parse(line);
    return typeof entry === 'object' && entry !== null && typeof entry.level === 'number' && typeof entry.time === 'number' ? entry : null;
  } catch {
    return null;
  }
}

function clock(time) {
  const d = new Date(time);
  return [d.getHours(), d.getMinutes(), d.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':');
}

function levelTag(level) {
  const tag = LEVELS[level] ?? `LEVEL${level}`;
  return tag === '' ? '' : `${tag} `;
}

/** A scalar, or a list of scalars joined with commas; null for anything else. */
function scalarText(value) {
  if (Array.isArray(value)) return value.every((v) => v === null || typeof v !== 'object') ? value.join(',') : null;
  return value === null || typeof value === 'object' ? null : String(value);
}

/** Scalar fields the message does not already say, as key=value. */
function fields(entry) {
  const msg = String(entry.msg ?? '');
  const parts = [];
  for (const [key, value] of Object.entries(entry)) {
    const text = scalarText(value);
    if (OMIT.has(key) || text === null || msg.includes(text)) continue;
    parts.push(`${key}=${/\s/.test(text) ? JSON.stringify(text) : text}`);
  }
  return parts.length === 0 ? '' : `  ${parts.join(' ')}`;
}
