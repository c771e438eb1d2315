import { Counter, Gauge, type Registry } from 'prom-client';

/** What the record buffer exposes; read by the collect() callbacks at scrape time. */
export interface RecordBufferState {
  buffered(): number;
  unconfirmed(): number;
}

export interface RecordBufferMetrics {
  enqueued: Counter;
  dropped: Counter;
  retried: Counter;
  resent: Counter;
  released: Counter;
}

export function recordBufferMetrics(registry: Registry, state: RecordBufferState): RecordBufferMetrics {
  const registers = [registry];
  new Gauge({
    name: 'gateway_records_buffered',
    help: 'Usage and audit records held in memory, not yet in Redis',
    registers,
    collect() {
      this.set(state.buffered());
    },
  });
  new Gauge({
    name: 'gateway_records_unconfirmed',
    help: 'Records in Redis not yet seen written by a writer, kept to re-send if Redis loses them',
    registers,
    collect() {
      this.set(state.unconfirmed());
    },
  });
  return {
    enqueued: new Counter({ name: 'gateway_records_enqueued_total', help: 'Records added to the records queue', registers }),
    dropped: new Counter({
      name: 'gateway_records_dropped_total',
      help: 'Records lost because the buffer was full while Redis was away (oldest first), or unsent at shutdown',
      registers,
    }),
    retried: new Counter({ name: 'gateway_records_retried_total', help: 'Batch sends to Redis that failed and were retried', registers }),
    resent: new Counter({
      name: 'gateway_records_resent_total',
      help: 'Records sent again because Redis restarted (or failed over) before a writer took them',
      registers,
    }),
    released: new Counter({
      name: 'gateway_records_unconfirmed_released_total',
      help: 'Records let go before a writer confirmed them, to stay within the buffer bound',
      registers,
    }),
  };
}
