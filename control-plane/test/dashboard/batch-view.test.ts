import { describe, expect, it } from 'vitest';
import type { Batch } from '../../dashboard/src/api/types.js';
import { batchFileName, batchMoment, batchProgress, BATCH_STATUS_LOOK, isRunning } from '../../dashboard/src/lib/batch-view.js';
import { BATCH_STATUSES } from '../../src/batches/batch-schemas.js';

/** How the Batches page words a batch: progress, the moment shown, status badges, file names. */
const batch = (over: Partial<Batch> = {}): Batch => ({
  id: 'batch_abc',
  project_id: 'p',
  key_id: 'k',
  api: 'openai',
  endpoint: '/v1/chat/completions',
  status: 'in_progress',
  request_counts: { total: 40, completed: 12, failed: 3 },
  input_file_id: 'file-in',
  output_file_id: null,
  error_file_id: null,
  metadata: null,
  reason: null,
  created_at: '2026-03-02T09:00:00.000Z',
  in_progress_at: '2026-03-02T09:00:00.000Z',
  finalizing_at: null,
  completed_at: null,
  failed_at: null,
  expired_at: null,
  cancelling_at: null,
  cancelled_at: null,
  expires_at: '2026-03-03T09:00:00.000Z',
  ...over,
});

describe('the Batches page words', () => {
  it('says how many lines are answered each way, of all', () => {
    expect(batchProgress(batch())).toEqual({ completedShare: 0.3, failedShare: 0.075, label: '12 completed · 3 failed of 40' });
    expect(batchProgress(batch({ request_counts: { total: 12_000, completed: 12_000, failed: 0 } })).label).toBe('12,000 completed · 0 failed of 12,000');
    expect(batchProgress(batch({ request_counts: { total: 0, completed: 0, failed: 0 } }))).toEqual({ completedShare: 0, failedShare: 0, label: 'No lines' });
  });

  it('shows when it ended, or while it runs when its window closes', () => {
    expect(batchMoment(batch())).toEqual({ label: 'Ends by', at: '2026-03-03T09:00:00.000Z' });
    expect(batchMoment(batch({ status: 'cancelling', cancelling_at: '2026-03-02T09:10:00.000Z' })).label).toBe('Cancelling since');
    expect(batchMoment(batch({ status: 'cancelled', cancelling_at: '2026-03-02T09:10:00.000Z', cancelled_at: '2026-03-02T09:11:00.000Z' }))).toEqual({ label: 'Cancelled', at: '2026-03-02T09:11:00.000Z' });
    expect(batchMoment(batch({ status: 'completed', completed_at: '2026-03-02T09:20:00.000Z' })).label).toBe('Completed');
    expect(isRunning(batch())).toBe(true);
    expect(isRunning(batch({ status: 'cancelling' }))).toBe(true);
    expect(isRunning(batch({ status: 'completed' }))).toBe(false);
  });

  it('has an icon and a word for every status the API gives, and names the files as the API does', () => {
    expect(Object.keys(BATCH_STATUS_LOOK).sort()).toEqual([...BATCH_STATUSES].sort());
    for (const look of Object.values(BATCH_STATUS_LOOK)) expect(look.icon).not.toBe('');
    expect(batchFileName(batch(), 'output')).toBe('batch_abc_output.jsonl');
    expect(batchFileName(batch(), 'errors')).toBe('batch_abc_error.jsonl');
  });
});
