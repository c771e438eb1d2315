import { statusLine } from '@gateway/shared';
import { TAGS_HEADER } from '../attribution/tags-header.js';

/**
 * Header names, status lines and common values as bytes, made once. uWebSockets.js converts a
 * string argument into a freshly allocated UTF-8 copy on every call (a length scan, a malloc, a
 * copy, a free); bytes it reads in place. The request path passes a dozen names per request.
 */
const bytes = (text: string): Buffer => Buffer.from(text, 'latin1');

export const NAME = {
  apiKey: bytes('x-api-key'),
  authorization: bytes('authorization'),
  requestId: bytes('x-request-id'),
  userAgent: bytes('user-agent'),
  contentType: bytes('content-type'),
  contentLength: bytes('content-length'),
  cacheControl: bytes('cache-control'),
  retryAfter: bytes('retry-after'),
  gatewayTags: bytes(TAGS_HEADER),
  origin: bytes('origin'),
  gatewayCache: bytes('x-gateway-cache'),
  age: bytes('age'),
  droppedParams: bytes('x-gateway-dropped-params'),
} as const;

export const VALUE = {
  eventStream: bytes('text/event-stream; charset=utf-8'),
  noCache: bytes('no-cache'),
} as const;

const statusLines = new Map<number, Buffer>();

/** `200 OK` and the like; one Buffer per status code, kept (there are a few dozen). */
export function statusBytes(status: number): Buffer {
  let line = statusLines.get(status);
  if (line === undefined) {
    line = bytes(statusLine(status));
    statusLines.set(status, line);
  }
  return line;
}

const VALUES_KEPT = 32;
const values = new Map<string, Buffer>();

/**
 * A header value the gateway sends again and again (content types), as bytes; once as many are
 * kept as a gateway uses, others go as strings.
 */
export function valueBytes(value: string): Buffer | string {
  const known = values.get(value);
  if (known !== undefined) return known;
  if (values.size >= VALUES_KEPT) return value;
  const made = Buffer.from(value, 'utf8');
  values.set(value, made);
  return made;
}
