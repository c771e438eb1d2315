import { Client, type Dispatcher } from 'undici';

/**
 * The provider connections when nothing caps them: one undici Client (one keep-alive connection)
 * per request in flight, and a stack of the idle ones. undici's Pool finds a free connection by
 * walking all of them, so with 10,000 streams held every new request walked 10,000 busy
 * connections; here it takes the last one freed, or opens one. The most recently used is reused
 * first, so the rest stay idle long enough for the keep-alive timeout to close them, and a
 * connection that closes while idle is forgotten.
 */
interface Slot {
  client: Client;
  idle: boolean;
  gone: boolean;
}

export class ClientStack {
  private readonly idle: Slot[] = [];
  private readonly all = new Set<Slot>();

  constructor(
    private readonly origin: string,
    private readonly options: Client.Options,
  ) {}

  /** Connections open or opening (busy and idle). */
  get size(): number {
    return this.all.size;
  }

  dispatch(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    let slot = this.idle.pop();
    while (slot !== undefined && slot.gone) slot = this.idle.pop();
    if (slot === undefined) slot = this.open();
    slot.idle = false;
    // false: the connection is busy until it drains; true (it could take more) never happens
    // without pipelining, but then it goes back at once.
    if (slot.client.dispatch(opts, handler)) this.release(slot);
    return true;
  }

  async destroy(): Promise<void> {
    const clients = [...this.all].map((s) => s.client);
    this.all.clear();
    this.idle.length = 0;
    await Promise.all(clients.map((c) => c.destroy().catch(() => {})));
  }

  private open(): Slot {
    const client = new Client(this.origin, this.options);
    const slot: Slot = { client, idle: false, gone: false };
    this.all.add(slot);
    client.on('drain', () => this.release(slot));
    client.on('disconnect', () => {
      // Busy, it fails its request and drains; idle, nothing will use it again soon.
      if (!slot.idle || slot.gone) return;
      this.forget(slot);
    });
    return slot;
  }

  private release(slot: Slot): void {
    if (slot.idle || slot.gone) return;
    slot.idle = true;
    this.idle.push(slot);
  }

  private forget(slot: Slot): void {
    slot.gone = true;
    this.all.delete(slot);
    void slot.client.close().catch(() => {});
    // Closed idle slots are skipped when popped; compact now and then so the stack stays small.
    if (this.idle.length > 64 && this.idle.length > 2 * this.all.size) {
      const live = this.idle.filter((s) => !s.gone);
      this.idle.length = 0;
      this.idle.push(...live);
    }
  }
}
