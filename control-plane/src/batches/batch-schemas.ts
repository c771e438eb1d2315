/** The batch routes' response shape (docs/management-api.md "Batches"); it joins the shared schemas. */
const dateTime = { type: 'string', format: 'date-time' } as const;
const moment = (what: string) => ({ type: ['string', 'null'], format: 'date-time', description: `When it ${what}; null until then.` }) as const;

export const BATCH_STATUSES = ['validating', 'failed', 'in_progress', 'finalizing', 'completed', 'expired', 'cancelling', 'cancelled'] as const;

export const BATCH_SCHEMAS = [
  {
    $id: 'Batch',
    description:
      "A batch of the project's Batch API (`batch_…`) or Message Batches (`msgbatch_…`), with the gateway's status of it in OpenAI's words whichever API made it. Times are to the second.",
    type: 'object',
    required: [
      'id',
      'project_id',
      'key_id',
      'api',
      'endpoint',
      'status',
      'request_counts',
      'input_file_id',
      'output_file_id',
      'error_file_id',
      'metadata',
      'reason',
      'created_at',
      'in_progress_at',
      'finalizing_at',
      'completed_at',
      'failed_at',
      'expired_at',
      'cancelling_at',
      'cancelled_at',
      'expires_at',
    ],
    properties: {
      id: { type: 'string' },
      project_id: { type: 'string', format: 'uuid' },
      key_id: { type: 'string', format: 'uuid', description: 'The key that made it; its lines ran as requests of that key.' },
      api: { type: 'string', enum: ['openai', 'anthropic'], description: '`openai`: POST /v1/batches; `anthropic`: POST /v1/messages/batches.' },
      endpoint: { type: 'string', description: 'The endpoint every line calls (`/v1/messages` for a message batch).' },
      status: { type: 'string', enum: BATCH_STATUSES },
      request_counts: {
        type: 'object',
        required: ['total', 'completed', 'failed'],
        properties: {
          total: { type: 'integer', description: 'Lines of the batch.' },
          completed: { type: 'integer', description: 'Lines answered 2xx (the output file).' },
          failed: { type: 'integer', description: 'Lines answered otherwise (the error file).' },
        },
      },
      input_file_id: { type: 'string', description: "The file of its requests (a message batch's is not listed by the Files API)." },
      output_file_id: { type: ['string', 'null'], description: 'Once ended, when some line was answered 2xx.' },
      error_file_id: { type: ['string', 'null'], description: 'Once ended, when some line was not.' },
      metadata: { type: ['object', 'null'], additionalProperties: { type: 'string' } },
      reason: {
        type: ['object', 'null'],
        required: ['code', 'message'],
        properties: { code: { type: 'string' }, message: { type: 'string' } },
        description: 'Why the gateway itself cancelled or failed it (its key deleted: `UNAUTHORIZED`); null otherwise.',
      },
      created_at: dateTime,
      in_progress_at: moment('started'),
      finalizing_at: moment('started ending'),
      completed_at: moment('completed'),
      failed_at: moment('failed'),
      expired_at: moment('expired'),
      cancelling_at: moment('was asked to stop'),
      cancelled_at: moment('ended cancelled'),
      expires_at: { ...dateTime, description: 'When its completion window ends.' },
    },
  },
] as const;
