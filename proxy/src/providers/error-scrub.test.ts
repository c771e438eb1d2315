import { describe, expect, it } from 'vitest';
import { scrubCloudIdentifiers } from './error-scrub.js';
import { providerErrorDetail, providerStatusError, providerTextOf, streamErrorEvent } from './upstream-error.js';

/** What Bedrock and Vertex say when the gateway's identity may not do something, as they say it. */
const BEDROCK_DENIED =
  'User: arn:aws:sts::123456789012:assumed-role/GatewayBedrockRole/invoke-session-42 is not authorized to perform: bedrock:InvokeModel on resource: arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-sonnet-4-5-20250929-v1:0 because no identity-based policy allows the bedrock:InvokeModel action';
const VERTEX_DENIED =
  "Permission 'aiplatform.endpoints.predict' denied on resource '//aiplatform.googleapis.com/projects/acme-prod-123/locations/us-central1/publishers/google/models/gemini-2.5-flash' (or it may not exist).";
const VERTEX_DISABLED =
  'Vertex AI API has not been used in project 123456789012 before or it is disabled. Enable it by visiting https://console.developers.google.com/apis/api/aiplatform.googleapis.com/overview?project=123456789012 then retry.';

describe('scrubCloudIdentifiers', () => {
  it('replaces IAM and STS ARNs and the account in them, keeping the sentence', () => {
    expect(scrubCloudIdentifiers(BEDROCK_DENIED)).toBe('User: <arn> is not authorized to perform: bedrock:InvokeModel on resource: <arn> because no identity-based policy allows the bedrock:InvokeModel action');
    expect(scrubCloudIdentifiers('Role arn:aws:iam::123456789012:role/service-role/Gateway.Invoker cannot be assumed.')).toBe('Role <arn> cannot be assumed.');
    expect(scrubCloudIdentifiers('in "arn:aws-us-gov:iam::123456789012:user/ops",')).toBe('in "<arn>",');
    expect(scrubCloudIdentifiers('Bucket arn:aws:s3:::acme-private-prompts (denied)')).toBe('Bucket <arn> (denied)');
  });

  it('replaces AWS account ids and key ids, not other numbers', () => {
    expect(scrubCloudIdentifiers('The account 123456789012 is not subscribed to this model.')).toBe('The account <aws-account> is not subscribed to this model.');
    expect(scrubCloudIdentifiers('Account: 1234-5678-9012')).toBe('Account: <aws-account>');
    expect(scrubCloudIdentifiers('Key AKIAIOSFODNN7EXAMPLE of role AROA3XFRBF535PLBIFPI refused')).toBe('Key <aws-key-id> of role <aws-key-id> refused');
    // Longer numbers, decimals, ids and dates stay what they are.
    for (const kept of ['1234567890123 tokens', 'retry in 0.123456789012 s', 'request 6f1c2a3e-1b2c-4d5e-8f90-123456789012', 'at 1735689600000', 'max_tokens: 4096', '2025-09-29']) {
      expect(scrubCloudIdentifiers(kept)).toBe(kept);
    }
  });

  it('replaces GCP project ids and numbers in resource names, prose and queries', () => {
    expect(scrubCloudIdentifiers(VERTEX_DENIED)).toBe(
      "Permission 'aiplatform.endpoints.predict' denied on resource '//aiplatform.googleapis.com/projects/<gcp-project>/locations/us-central1/publishers/google/models/gemini-2.5-flash' (or it may not exist).",
    );
    expect(scrubCloudIdentifiers(VERTEX_DISABLED)).toBe(
      'Vertex AI API has not been used in project <gcp-project> before or it is disabled. Enable it by visiting https://console.developers.google.com/apis/api/aiplatform.googleapis.com/overview?project=<gcp-project> then retry.',
    );
    expect(scrubCloudIdentifiers("Quota exceeded for project 'acmeprod' and consumer projects/987654321")).toBe("Quota exceeded for project '<gcp-project>' and consumer projects/<gcp-project>");
    expect(scrubCloudIdentifiers('project_id: acme-prod-123, project number 123456789012.')).toBe('project_id: <gcp-project>, project number <gcp-project>.');
    expect(scrubCloudIdentifiers('projects/example.com:acme-prod/locations/global')).toBe('projects/<gcp-project>/locations/global');
    // English after "project" is not an id.
    expect(scrubCloudIdentifiers('Check the project settings and the project billing.')).toBe('Check the project settings and the project billing.');
  });

  it('replaces service account addresses whole, before the project in them', () => {
    expect(scrubCloudIdentifiers('Permission denied for gateway@acme-prod-123.iam.gserviceaccount.com on the endpoint.')).toBe('Permission denied for <service-account> on the endpoint.');
    expect(scrubCloudIdentifiers('serviceAccount:123456789012-compute@developer.gserviceaccount.com lacks aiplatform.user')).toBe('serviceAccount:<service-account> lacks aiplatform.user');
    expect(scrubCloudIdentifiers('service-123456789012@gcp-sa-aiplatform.iam.gserviceaccount.com')).toBe('<service-account>');
  });

  it('leaves a message without identifiers alone', () => {
    for (const text of ['Too many requests, please wait before trying again.', 'max_tokens: must be at most 8192', 'Model not found: claude-x', 'Request had invalid authentication credentials.']) {
      expect(scrubCloudIdentifiers(text)).toBe(text);
    }
  });
});

describe('provider error texts', () => {
  it('reach the client scrubbed and the log whole, credentials removed from both', () => {
    const body = JSON.stringify({ message: `${BEDROCK_DENIED} (key sk-proj-abcdefghijklmnop)` });
    const detail = providerErrorDetail(body);
    expect(detail.message).not.toMatch(/123456789012|GatewayBedrockRole|arn:aws/);
    expect(detail.message).toContain('User: <arn> is not authorized to perform: bedrock:InvokeModel');
    expect(detail.logged).toContain('arn:aws:sts::123456789012:assumed-role/GatewayBedrockRole/invoke-session-42');
    for (const text of [detail.message, detail.logged]) expect(text).not.toContain('sk-proj-abcdefghijklmnop');
  });

  it('scrub an identifier however long the message, before it is shortened', () => {
    const long = `${'x '.repeat(140)}denied to arn:aws:iam::123456789012:role/AVeryLongRoleNameThatCrossesTheCut`;
    const { message } = providerErrorDetail(JSON.stringify({ message: long }));
    expect(message).not.toContain('arn:aws');
    expect(message).not.toContain('1234');
  });

  it('keep the provider\'s words with the error for the log, not in it', () => {
    const err = providerStatusError('gcp', 403, JSON.stringify({ error: { code: 403, message: VERTEX_DENIED, status: 'PERMISSION_DENIED' } }));
    expect(err.message).toContain('projects/<gcp-project>/locations');
    expect(providerTextOf(err)).toBe(VERTEX_DENIED);
    expect(JSON.stringify(err.toBody())).not.toContain('acme-prod-123');
    expect(Object.keys(err).join()).not.toMatch(/text|logged/);
    const mid = streamErrorEvent('gcp', JSON.stringify({ error: { message: VERTEX_DISABLED } }));
    expect(mid.message).not.toContain('123456789012');
    expect(providerTextOf(mid)).toBe(VERTEX_DISABLED);
  });
});
