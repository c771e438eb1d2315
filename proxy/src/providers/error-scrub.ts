/**
 * The operator's cloud identifiers out of provider error texts a client reads. An access-denied
 * answer of Bedrock or Vertex names the gateway's own cloud identity — the IAM role and STS
 * session ARNs, the AWS account, the GCP project and the service account — which tells a tenant
 * how the operator's accounts are laid out and is of no use to a client, who cannot change the
 * gateway's permissions. Each identifier becomes a placeholder saying what stood there, so the
 * message still reads; the operator finds the original in the proxy's log line of the failure.
 *
 * Shapes, not providers: the rules apply to every provider's text (an OpenAI-compatible server
 * behind a cloud account says the same things), in this order, each on what the earlier left.
 */
type Rule = [RegExp, string | ((match: string, ...groups: string[]) => string)];

/** Characters that end an ARN in prose or JSON; a trailing full stop is the sentence's. */
const ARN_TAIL = `[^\\s"'\`<>,;()[\\]{}]*[^\\s"'\`<>,;()[\\]{}.]`;

const GCP_PROJECT_ID = '[a-z][a-z0-9-]{4,28}[a-z0-9]';
const GCP_PROJECT = `(?:${GCP_PROJECT_ID}|\\d{5,20}|[a-z0-9.-]+\\.[a-z]{2,}:${GCP_PROJECT_ID})`;

const RULES: readonly Rule[] = [
  // Before anything else: the address holds the project id (name@project.iam.gserviceaccount.com).
  [/[A-Za-z0-9._%+-]+@(?:[A-Za-z0-9-]+\.)*gserviceaccount\.com\b/g, '<service-account>'],
  // arn:partition:service:region:account:resource (IAM roles, STS sessions, inference profiles, …).
  [new RegExp(`\\barn:aws[a-z-]*:[a-z0-9-]*:[a-z0-9-]*:[a-z0-9-]*:${ARN_TAIL}`, 'gi'), '<arn>'],
  // Resource names: projects/my-project-123/locations/…, projects/123456789012.
  [/\bprojects\/(?!<)[^/\s"'`?&#,;()[\]{}]+/g, 'projects/<gcp-project>'],
  // In prose or a query: "project 123456789012", "project `my-proj`", "?project=my-proj", "project_id: x".
  [
    new RegExp(`\\b(project(?:[ _-]?(?:id|number))?)(\\s*[:=]\\s*|\\s+)(["'\`]?)(${GCP_PROJECT})\\3(?![\\w-])`, 'gi'),
    (match, label, separator, quote, id) =>
      // Unquoted after a space, an id must look like one: "the project settings" is English.
      quote === '' && !/[:=]/.test(separator as string) && !/[\d-]/.test(id as string) ? match : `${label}${separator}${quote}<gcp-project>${quote}`,
  ],
  // AWS access key ids and role / user unique ids (AKIA…, ASIA…, AROA…, AIDA…).
  [/\b(?:AKIA|ASIA|AROA|AIDA)[A-Z0-9]{16}\b/g, '<aws-key-id>'],
  // A 12-digit account id on its own (not part of a longer number, decimal or identifier).
  [/(?<![\w.-])(?:\d{12}|\d{4}-\d{4}-\d{4})(?![\w-])/g, '<aws-account>'],
];

/** `text` with the cloud identifiers above replaced by placeholders. */
export function scrubCloudIdentifiers(text: string): string {
  let out = text;
  for (const [pattern, replacement] of RULES) out = typeof replacement === 'string' ? out.replace(pattern, replacement) : out.replace(pattern, replacement);
  return out;
}
