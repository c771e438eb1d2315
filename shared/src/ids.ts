import { uuidV7 } from './uuid-v7.js';

/**
 * Record ids are UUIDv7: time-ordered, so inserts land at the right edge of the primary-key
 * index instead of all over it, and ids sort roughly by time for keyset paging ties.
 */
export function newRecordId(): string {
  return uuidV7();
}

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The client's x-request-id if it is short and harmless to echo and log, else a new one. */
export function requestIdFrom(clientValue: string | undefined): string {
  if (clientValue !== undefined && clientValue !== '' && SANE_REQUEST_ID.test(clientValue)) return clientValue;
  return uuidV7();
}
