import { Hash } from '@smithy/hash-node';
import { SignatureV4 } from '@smithy/signature-v4';

/**
 * AWS Signature Version 4 for Bedrock's runtime API, by the Smithy signer the AWS SDKs use (no
 * crypto of our own). A path carries the model id or inference-profile ARN URL-encoded
 * (`/model/arn%3Aaws%3Abedrock…%2F…/converse`); the signer encodes it once more for the canonical
 * request, as AWS expects of every service but S3. The signer keeps the day's signing key, so a
 * request costs one body hash and two HMACs.
 */
export interface BedrockCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export class BedrockSigner {
  private readonly signer: SignatureV4;
  private readonly hostname: string;
  private readonly port: number | undefined;
  private readonly protocol: string;
  private readonly host: string;

  constructor(url: URL, region: string, credentials: BedrockCredentials) {
    this.signer = new SignatureV4({ credentials, region, service: 'bedrock', sha256: Hash.bind(null, 'sha256'), uriEscapePath: true });
    this.hostname = url.hostname;
    this.port = url.port === '' ? undefined : Number(url.port);
    this.protocol = url.protocol;
    this.host = url.host;
  }

  /** The headers to send with `body` to `path`: `headers` plus host, date, signature and session token. */
  async sign(path: string, body: Buffer, headers: Record<string, string>): Promise<Record<string, string>> {
    const signed = await this.signer.sign({
      method: 'POST',
      protocol: this.protocol,
      hostname: this.hostname,
      ...(this.port === undefined ? {} : { port: this.port }),
      path,
      query: {},
      headers: { ...headers, host: this.host },
      body,
    });
    // undici sends the host itself, from the pool's origin: the same value.
    const out = signed.headers as Record<string, string>;
    delete out.host;
    return out;
  }
}
