import { createHmac, hash } from 'node:crypto';

/**
 * AWS Signature Version 4 for Bedrock's runtime API, on node:crypto's SHA-256 (the one-shot `hash`,
 * which allocates no Hash object) and HMAC. Every
 * request this adapter sends has the same shape (a JSON POST, no query), so the canonical request
 * is one template: the canonical URI is worked out once per path, the signing key once per day
 * (SigV4's derived key depends only on the day, region and service), the `x-amz-date` once per
 * second. A request then costs one body hash, one canonical-request hash and one HMAC, and a few
 * string joins; the general-purpose signers (aws4, Smithy's) parse, sort and re-encode the whole
 * request each time, which was most of the Bedrock adapter's CPU. The Smithy signer of the AWS SDKs
 * stays the reference: the unit test compares signatures with it, and the wire mock verifies every
 * request with it. A path carries the model id or inference-profile ARN URL-encoded
 * (`/model/arn%3Aaws%3Abedrock…%2F…/converse`); it is encoded once more in the canonical request,
 * as AWS expects of every service but S3.
 */
export interface BedrockCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

const SERVICE = 'bedrock';
const CONTENT_TYPE = 'application/json';
/** Distinct paths are the configured models × two operations; anything beyond is not cached. */
const MAX_CACHED_PATHS = 1024;

export class BedrockSigner {
  private readonly headerTail: string;
  private readonly signedHeaders: string;
  private readonly token: string | undefined;
  private readonly tokenLine: string;
  private readonly canonicalUris = new Map<string, string>();
  private keyDay = '';
  private key: Buffer = Buffer.alloc(0);
  private second = -1;
  private amzDate = '';

  constructor(
    url: URL,
    private readonly region: string,
    private readonly credentials: BedrockCredentials,
  ) {
    this.token = credentials.sessionToken;
    this.tokenLine = this.token === undefined ? '' : `x-amz-security-token:${canonicalValue(this.token)}\n`;
    // Canonical headers after content-length, in name order; values trimmed, inner spaces folded.
    this.headerTail = `content-type:${CONTENT_TYPE}\nhost:${url.host}\nx-amz-date:`;
    this.signedHeaders = this.token === undefined ? 'content-length;content-type;host;x-amz-date' : 'content-length;content-type;host;x-amz-date;x-amz-security-token';
  }

  /**
   * The headers to send with `body` to `path`: content type, date, signature and session token.
   * Host and content-length are signed but left to undici, which sends the same values (the
   * pool's origin, the body's length). `now` is for tests.
   */
  sign(path: string, body: Buffer, now: number = Date.now()): Record<string, string> {
    const amzDate = this.dateAt(now);
    const day = amzDate.slice(0, 8);
    const scope = `${day}/${this.region}/${SERVICE}/aws4_request`;
    const canonical = `POST\n${this.canonicalUri(path)}\n\ncontent-length:${body.length}\n${this.headerTail}${amzDate}\n${this.tokenLine}\n${this.signedHeaders}\n${hash('sha256', body, 'hex')}`;
    const stringToSign = `AWS4-HMAC-SHA256\n${amzDate}\n${scope}\n${hash('sha256', canonical, 'hex')}`;
    const signature = createHmac('sha256', this.signingKey(day)).update(stringToSign).digest('hex');
    const out: Record<string, string> = {
      'content-type': CONTENT_TYPE,
      'x-amz-date': amzDate,
      authorization: `AWS4-HMAC-SHA256 Credential=${this.credentials.accessKeyId}/${scope}, SignedHeaders=${this.signedHeaders}, Signature=${signature}`,
    };
    if (this.token !== undefined) out['x-amz-security-token'] = this.token;
    return out;
  }

  /** `YYYYMMDDTHHMMSSZ`, formatted once per second. */
  private dateAt(now: number): string {
    const second = Math.floor(now / 1000);
    if (second !== this.second) {
      this.second = second;
      this.amzDate = new Date(second * 1000).toISOString().replace(/[:-]|\.\d{3}/g, '');
    }
    return this.amzDate;
  }

  /** kSigning = HMAC(HMAC(HMAC(HMAC("AWS4" + secret, day), region), service), "aws4_request"). */
  private signingKey(day: string): Buffer {
    if (day !== this.keyDay) {
      const kDate = createHmac('sha256', `AWS4${this.credentials.secretAccessKey}`).update(day).digest();
      const kRegion = createHmac('sha256', kDate).update(this.region).digest();
      const kService = createHmac('sha256', kRegion).update(SERVICE).digest();
      this.key = createHmac('sha256', kService).update('aws4_request').digest();
      this.keyDay = day;
    }
    return this.key;
  }

  private canonicalUri(path: string): string {
    let uri = this.canonicalUris.get(path);
    if (uri === undefined) {
      uri = path.replace(/\/{2,}/g, '/').split('/').map(encodeSegment).join('/');
      if (this.canonicalUris.size < MAX_CACHED_PATHS) this.canonicalUris.set(path, uri);
    }
    return uri;
  }
}

/** RFC 3986 encoding of one path segment (encodeURIComponent leaves `!'()*` as they are). */
function encodeSegment(segment: string): string {
  return encodeURIComponent(segment).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

function canonicalValue(value: string): string {
  return value.trim().replace(/\s+/g, ' ');
}
