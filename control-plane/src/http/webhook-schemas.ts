import { WEBHOOK_EVENT_TYPES } from '../webhooks/event-types.js';

/** Response shapes of the webhook routes, added to the shared schemas (schemas.ts). */
const uuid = { type: 'string', format: 'uuid' } as const;
const dateTime = { type: 'string', format: 'date-time' } as const;
const events = { type: 'array', items: { type: 'string', enum: WEBHOOK_EVENT_TYPES }, description: 'The event types sent to this endpoint.' } as const;

export const WEBHOOK_SCHEMAS = [
  {
    $id: 'Webhook',
    description: 'A webhook endpoint as listed: never its secret.',
    type: 'object',
    required: ['id', 'project_id', 'url', 'events', 'enabled', 'disabled_reason', 'created_at'],
    properties: {
      id: uuid,
      project_id: uuid,
      url: { type: 'string' },
      events,
      enabled: { type: 'boolean', description: 'A disabled endpoint gets nothing; PATCH `{"enabled": true}` turns it on again.' },
      disabled_reason: { type: ['string', 'null'], description: 'Why the gateway disabled it (repeated failures, 410 Gone); null while enabled or when disabled by hand.' },
      created_at: dateTime,
    },
  },
  {
    $id: 'NewWebhook',
    description: 'A webhook just created: the only response that ever carries its signing `secret`.',
    type: 'object',
    required: ['id', 'project_id', 'url', 'events', 'secret', 'enabled', 'created_at'],
    properties: {
      id: uuid,
      project_id: uuid,
      url: { type: 'string' },
      events,
      secret: { type: 'string', description: '`whsec_` + base64: the key of every delivery\'s `webhook-signature`. Shown once.' },
      enabled: { type: 'boolean' },
      created_at: dateTime,
    },
  },
  {
    $id: 'WebhookDelivery',
    description: 'One event sent (or being sent) to one endpoint.',
    type: 'object',
    required: ['id', 'event_id', 'event_type', 'status', 'attempts', 'last_status', 'last_error', 'created_at', 'last_attempt_at', 'next_attempt_at'],
    properties: {
      id: uuid,
      event_id: { type: 'string', description: 'The `webhook-id` header (`msg_…`): the same on every attempt, for de-duplication.' },
      event_type: { type: 'string', enum: WEBHOOK_EVENT_TYPES },
      status: { type: 'string', enum: ['pending', 'delivered', 'failed'] },
      attempts: { type: 'integer', description: 'Attempts made so far.' },
      last_status: { type: ['integer', 'null'], description: "HTTP status of the last attempt's answer; null when it got none." },
      last_error: { type: ['string', 'null'], description: 'Why the last attempt failed, in the gateway\'s words (never the answer\'s body).' },
      created_at: dateTime,
      last_attempt_at: { ...dateTime, type: ['string', 'null'] },
      next_attempt_at: { ...dateTime, type: ['string', 'null'], description: 'When the next attempt is due; null once delivered or failed.' },
    },
  },
] as const;
