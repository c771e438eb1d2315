/**
 * A Map of at most `max` entries that drops the oldest insertion first, in O(1). A plain Map
 * evicted from its front (`map.keys().next()`) is not: V8 keeps a deleted entry's slot until the
 * table is rebuilt, and iteration walks past every such slot, so under steady churn each eviction
 * cost tens of µs (a flood of unknown keys paid it on every request). Here the insertion order is a
 * ring of slots, and each entry knows its slot, so a key deleted and set again is dropped only when
 * its latest insertion is the oldest.
 */
export class BoundedMap<K, V> {
  private readonly entries = new Map<K, { value: V; slot: number }>();
  /** Grows to `max` as entries come (no memory held up front), then wraps. */
  private readonly ring: K[] = [];
  private next = 0;

  constructor(
    private readonly max: number,
    /** Told of each entry dropped to make room (not of deletions). */
    private readonly onEvict?: (key: K, value: V) => void,
  ) {
    if (!Number.isInteger(max) || max < 1) throw new RangeError('BoundedMap needs room for at least one entry');
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: K): V | undefined {
    return this.entries.get(key)?.value;
  }

  has(key: K): boolean {
    return this.entries.has(key);
  }

  /** A key already held keeps its place and takes the new value, as in a Map. */
  set(key: K, value: V): void {
    const held = this.entries.get(key);
    if (held !== undefined) {
      held.value = value;
      return;
    }
    const slot = this.next;
    if (slot < this.ring.length) {
      const oldest = this.ring[slot] as K;
      const entry = this.entries.get(oldest);
      // The slot may be stale: its key was deleted since, or set again into a later slot.
      if (entry !== undefined && entry.slot === slot) {
        this.entries.delete(oldest);
        this.onEvict?.(oldest, entry.value);
      }
    }
    this.ring[slot] = key;
    this.next = slot + 1 === this.max ? 0 : slot + 1;
    this.entries.set(key, { value, slot });
  }

  delete(key: K): boolean {
    return this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
    this.ring.length = 0;
    this.next = 0;
  }

  *[Symbol.iterator](): IterableIterator<[K, V]> {
    for (const [key, entry] of this.entries) yield [key, entry.value];
  }
}
