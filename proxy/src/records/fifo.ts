/**
 * A first-in first-out queue with O(1) push, shift and unshift. Array#shift is O(n), and the
 * record buffer can hold hundreds of thousands of batches while Redis is away.
 */
export class Fifo<T> {
  private items: (T | undefined)[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  /** Puts an item back at the front (a batch whose send failed is again the oldest). */
  unshift(item: T): void {
    if (this.head > 0) {
      this.head--;
      this.items[this.head] = item;
    } else {
      this.items.unshift(item);
    }
  }

  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head];
    this.items[this.head] = undefined;
    this.head++;
    // Reclaim the dead prefix once it is the larger part, so memory follows the live length.
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }

  first(): T | undefined {
    return this.head < this.items.length ? this.items[this.head] : undefined;
  }

  last(): T | undefined {
    return this.head < this.items.length ? this.items[this.items.length - 1] : undefined;
  }

  /** The item `i` places from the front (0 = first). */
  at(i: number): T | undefined {
    return i >= 0 && this.head + i < this.items.length ? this.items[this.head + i] : undefined;
  }

  *[Symbol.iterator](): IterableIterator<T> {
    for (let i = this.head; i < this.items.length; i++) yield this.items[i] as T;
  }
}
