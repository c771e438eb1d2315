/** Shapes of the budget routes (docs/budgets.md); the response one joins the shared schemas. */
const uuid = { type: 'string', format: 'uuid' } as const;
const dateTime = { type: 'string', format: 'date-time' } as const;

export const TAG_PATTERN = '^[a-z0-9_.-]{1,32}=[A-Za-z0-9_.:-]{1,64}$';
export const PERIOD_PATTERN = '^(total|day|week|month|[1-9][0-9]{0,5}[mhd])$';
/** Largest limit a budget takes: what numeric(20,10) holds, with room. */
export const MAX_LIMIT_USD = 1_000_000_000;

export const budgetBodyProperties = {
  scope: { type: 'string', enum: ['project', 'key', 'tag'], description: 'What the budget counts: the whole project, one key (`key_id`) or one tag (`tag`).' },
  key_id: { ...uuid, description: 'The key (scope `key`).' },
  tag: { type: 'string', pattern: TAG_PATTERN, description: '`name=value` (scope `tag`), as in `x-gateway-tags`.' },
  limit_usd: { type: 'number', minimum: 0, maximum: MAX_LIMIT_USD, description: 'US dollars the scope may spend per period.' },
  period: {
    type: 'string',
    pattern: PERIOD_PATTERN,
    description: '`total` (never resets), `day`, `week`, `month` (calendar, in `timezone`) or `<n>m`, `<n>h`, `<n>d` (fixed windows from the budget\'s creation).',
  },
  timezone: { type: 'string', minLength: 1, maxLength: 64, description: 'IANA time zone of calendar periods (default `UTC`).' },
  alert_at: {
    type: 'array',
    maxItems: 10,
    uniqueItems: true,
    items: { type: 'number', exclusiveMinimum: 0, maximum: 1 },
    description: 'Fractions of the limit that send a `budget.threshold` webhook, once per period each.',
  },
} as const;

export const budgetParams = {
  type: 'object',
  required: ['id', 'budget_id'],
  additionalProperties: false,
  properties: { id: { ...uuid, description: 'Project id.' }, budget_id: { ...uuid, description: 'Budget id.' } },
} as const;

export const BUDGET_SCHEMAS = [
  {
    $id: 'Budget',
    description: 'A spending budget and where its current period stands.',
    type: 'object',
    required: ['id', 'project_id', 'scope', 'key_id', 'tag', 'limit_usd', 'period', 'timezone', 'alert_at', 'spent_usd', 'reserved_usd', 'period_start', 'resets_at', 'created_at'],
    properties: {
      id: uuid,
      project_id: uuid,
      scope: { type: 'string', enum: ['project', 'key', 'tag'] },
      key_id: { type: ['string', 'null'], format: 'uuid' },
      tag: { type: ['string', 'null'] },
      limit_usd: { type: 'number' },
      period: { type: 'string' },
      timezone: { type: 'string' },
      alert_at: { type: 'array', items: { type: 'number' } },
      spent_usd: { type: 'number', description: 'Settled spend in the current period (US dollars).' },
      reserved_usd: { type: 'number', description: 'Held for requests in flight and by the proxies\' unspent leases.' },
      period_start: dateTime,
      resets_at: { type: ['string', 'null'], format: 'date-time', description: 'When spend starts again at 0; null for `total`.' },
      created_at: dateTime,
    },
  },
] as const;
