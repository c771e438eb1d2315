import type { BatchQueue } from './batch-runner.js';
import type { BatchStore } from './batch-store.js';

/** What the Files and Batches routes need: the control plane's store and the queue batches run from. */
export interface BatchServices {
  store: BatchStore;
  queue: BatchQueue;
}
