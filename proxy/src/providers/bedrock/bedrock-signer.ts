import aws4 from 'aws4';

/**
 * AWS Signature Version 4 for Bedrock's runtime API, by `aws4`: a well-kept signer (no crypto of
 * our own) that works synchronously on node:crypto and keeps each day's signing key, so a request
 * costs one body hash, one canonical-request hash and one HMAC, with no promise in between. (The
 * Smithy signer of the AWS SDKs gives the same signatures at about three times the CPU; the wire
 * mock checks every request with it, so two implementations agree.) A path carries the model id or
 * inference-profile ARN URL-encoded (`/model/arn%3Aaws%3Abedrock…%2F…/converse`); it is encoded
 * once more in the canonical request, as AWS expects of every service but S3.
 */
export interface BedrockCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export class BedrockSigner {
  private readonly host: string;
  /** X-Amz-Date of the current second, formatted once per second rather than by aws4 per request. */
  private second = -1;
  private amzDate = '';

  constructor(
    url: URL,
    private readonly region: string,
    private readonly credentials: BedrockCredentials,
  ) {
    this.host = url.host;
  }

  /** The headers to send with `body` to `path`: `headers` plus date, signature and session token. */
  sign(path: string, body: Buffer, headers: Readonly<Record<string, string>>): Record<string, string> {
    const second = Math.floor(Date.now() / 1000);
    if (second !== this.second) {
      this.second = second;
      this.amzDate = new Date(second * 1000).toISOString().replace(/[:-]|\.\d{3}/g, '');
    }
    const signed = aws4.sign({ host: this.host, method: 'POST', path, service: 'bedrock', region: this.region, headers: Object.assign({}, headers, { 'X-Amz-Date': this.amzDate }), body }, this.credentials).headers as Record<string, string>;
    // Lower-case names, as undici keeps them; host and content-length are left to undici, which
    // sends the same values (the pool's origin, the body's length).
    // Object.assign rather than a spread: V8 makes properties added after an object spread slow.
    const out: Record<string, string> = Object.assign({}, headers, { 'x-amz-date': signed['X-Amz-Date'] as string, authorization: signed.Authorization as string });
    const token = signed['X-Amz-Security-Token'];
    if (token !== undefined) out['x-amz-security-token'] = token;
    return out;
  }
}
