import { closeSync, openSync, writeSync } from 'node:fs';

/**
 * Holds every CPU in its polling idle state while a measurement runs, as latency benchmarks do
 * (cyclictest, tuned's latency-performance profile): a process that keeps `/dev/cpu_dma_latency`
 * open with 0 written to it tells the kernel's PM QoS that no idle state may take any time to
 * leave. On a virtual machine whose idle CPU halts (a VM exit, then an interrupt to wake it),
 * each wake-up of a process waiting on a socket otherwise costs tens of microseconds; a request
 * through any proxy in another process wakes two more processes than a direct call does, so at
 * concurrency 1 those wake-ups, the hypervisor's, not the proxy's, can outweigh everything the
 * proxy does. Held, a CPU with nothing to run spins instead and the wake-up is immediate.
 * Needs root; elsewhere `refused` says why it could not.
 */
export interface IdleHold {
  /** Null when held; otherwise why not. */
  readonly refused: string | null;
  release(): void;
}

const PM_QOS = '/dev/cpu_dma_latency';

export function holdIdleStates(): IdleHold {
  let fd: number | null = null;
  try {
    fd = openSync(PM_QOS, 'w');
    // A 32-bit latency bound in microseconds; the request lasts as long as the file stays open.
    writeSync(fd, Buffer.alloc(4));
  } catch (err) {
    if (fd !== null) closeSync(fd);
    return { refused: `${PM_QOS}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, release: () => {} };
  }
  const held = fd;
  let open = true;
  return {
    refused: null,
    release: () => {
      if (open) closeSync(held);
      open = false;
    },
  };
}
