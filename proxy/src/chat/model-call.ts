import { GatewayError } from '@gateway/shared';
import { GatewayCall } from './gateway-call.js';
import { parseJsonBody } from '../protocols/json-body.js';

/** HTTP status recorded for a request whose client left before any answer (nginx's convention). */
export const CLIENT_CLOSED = 499;

/**
 * A model request with a JSON body (inference-call.ts, embeddings-call.ts): the key is checked
 * while the body arrives, then the body is read as JSON and handed to `run`. A client that leaves
 * while the body is read ends the request at once; later, it stops the provider call.
 */
export abstract class ModelCall extends GatewayCall {
  protected phase: 'reading' | 'running' | 'done' = 'reading';

  /** The client went away: stop the provider too. */
  clientGone(): void {
    if (this.phase === 'reading') {
      this.phase = 'done';
      this.finish('cancelled', CLIENT_CLOSED, null);
      return;
    }
    this.cancel?.abort();
  }

  tooLarge(): void {
    const known = this.knownNow;
    if (known !== null) this.key = known;
    else this.identify();
    this.phase = 'done';
    this.fail(new GatewayError('PAYLOAD_TOO_LARGE', `The body is larger than ${this.deps.config.maxBodyBytes} bytes.`), 'error');
  }

  async onBody(raw: Buffer): Promise<void> {
    if (!(await this.admitted())) return;
    this.phase = 'running';
    if (!this.info.jsonBody) {
      return this.fail(new GatewayError('UNSUPPORTED_MEDIA_TYPE', 'The body must be JSON: send content-type: application/json.'), 'error');
    }
    let json: unknown;
    try {
      json = parseJsonBody(raw);
    } catch (err) {
      if (!(err instanceof GatewayError)) throw err;
      return this.fail(err, 'error');
    }
    return this.run(json, raw);
  }

  /** The request, once its key is admitted and its body is JSON. */
  protected abstract run(json: unknown, raw: Buffer): Promise<void>;
}
