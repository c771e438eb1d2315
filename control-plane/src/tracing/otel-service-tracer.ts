import { defaultTextMapGetter, ROOT_CONTEXT, SpanKind, SpanStatusCode, type Span, type Tracer } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { BatchFigures, BatchJob, ServiceTracer } from './service-tracer.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The request's span while it is traced (null when tracing is off). */
    traceSpan: Span | null;
  }
}

const propagator = new W3CTraceContextPropagator();

/**
 * Spans of the control plane (one SERVER span per management request, under the HTTP server
 * conventions, with the signed-in user's id) and of the writer (one span per record batch, with
 * its record and row counts). Context is passed explicitly: no context manager is registered.
 */
export class OtelServiceTracer implements ServiceTracer {
  constructor(
    private readonly tracer: Tracer,
    private readonly shutdown: () => Promise<void>,
  ) {}

  traceRequests(app: FastifyInstance): void {
    app.decorateRequest('traceSpan', null);
    app.addHook('onRequest', (req, _reply, done) => {
      const route = req.routeOptions.url;
      const parent = propagator.extract(ROOT_CONTEXT, req.headers, defaultTextMapGetter);
      req.traceSpan = this.tracer.startSpan(
        route === undefined ? req.method : `${req.method} ${route}`,
        {
          kind: SpanKind.SERVER,
          attributes: {
            'http.request.method': req.method,
            ...(route === undefined ? {} : { 'http.route': route }),
            'url.path': req.url.split('?', 1)[0] as string,
            'gateway.request.id': req.id,
          },
        },
        parent,
      );
      done();
    });
    app.addHook('onResponse', (req, reply, done) => {
      endRequestSpan(req, reply.statusCode);
      done();
    });
    app.addHook('onRequestAbort', (req, done) => {
      endRequestSpan(req, null);
      done();
    });
  }

  async traceBatch<T extends BatchFigures>(job: BatchJob, run: () => Promise<T>): Promise<T> {
    const span = this.tracer.startSpan('process record batch', {
      kind: SpanKind.CONSUMER,
      attributes: { 'gateway.writer.job.id': job.id ?? '', 'gateway.writer.attempt': job.attemptsMade + 1 },
    });
    try {
      const outcome = await run();
      span.setAttributes({
        'gateway.writer.records': outcome.written + outcome.replayed + outcome.invalid,
        'gateway.writer.rows_written': outcome.written,
        'gateway.writer.rows_replayed': outcome.replayed,
        'gateway.writer.records_invalid': outcome.invalid,
      });
      return outcome;
    } catch (err) {
      const type = (err as { code?: unknown }).code;
      const errorType = typeof type === 'string' ? type : err instanceof Error ? err.name : 'unknown';
      span.setAttribute('error.type', errorType);
      span.setStatus({ code: SpanStatusCode.ERROR, message: errorType });
      throw err;
    } finally {
      span.end();
    }
  }

  close(): Promise<void> {
    return this.shutdown();
  }
}

/** `status` null: the client went away before the answer. */
function endRequestSpan(req: FastifyRequest, status: FastifyReply['statusCode'] | null): void {
  const span = req.traceSpan;
  if (span === null) return;
  req.traceSpan = null;
  if (req.principal !== null) span.setAttribute('enduser.id', req.principal.userId);
  if (status === null) {
    span.setAttribute('error.type', 'aborted');
  } else {
    span.setAttribute('http.response.status_code', status);
    // Server spans are errors for 5xx only: a 4xx is the caller's doing.
    if (status >= 500) {
      span.setAttribute('error.type', String(status));
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
  }
  span.end();
}
