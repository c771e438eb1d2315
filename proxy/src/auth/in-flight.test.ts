import { Errors, type GatewayError } from '@gateway/shared';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { IDLE_LISTS_KEPT, InFlightRegistry, type InFlightEntry, type Revocable } from './in-flight.js';

class FakeRequest implements Revocable {
  inFlightEntry: InFlightEntry | null = null;
  revokedWith: (GatewayError | undefined)[] = [];

  constructor(
    readonly keyId: string,
    readonly projectId: string,
    private readonly onRevoke: () => void = () => {},
  ) {}

  revoke(reason?: GatewayError): void {
    this.revokedWith.push(reason);
    this.onRevoke();
  }
}

describe('InFlightRegistry', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('finds requests by key and by project, whatever order they were added and removed in', () => {
    const registry = new InFlightRegistry();
    const requests = Array.from({ length: 30 }, (_, i) => new FakeRequest(`k${i % 3}`, `p${i % 2}`));
    for (const r of requests) registry.add(r);
    expect(registry.size).toBe(30);
    // Remove from the middle, the first and the last added.
    for (const i of [7, 0, 29, 14, 15, 3]) registry.remove(requests[i]!);
    registry.remove(requests[7]!);
    expect(registry.size).toBe(24);
    const live = requests.filter((_, i) => ![7, 0, 29, 14, 15, 3].includes(i));
    expect(new Set(registry.all())).toEqual(new Set(live));

    expect(registry.revokeKey('k1')).toBe(live.filter((r) => r.keyId === 'k1').length);
    for (const r of requests) expect(r.revokedWith.length).toBe(live.includes(r) && r.keyId === 'k1' ? 1 : 0);
    const left = live.filter((r) => r.keyId !== 'k1');
    expect(registry.size).toBe(left.length);
    expect(registry.revokeProject('p0')).toBe(left.filter((r) => r.projectId === 'p0').length);
    expect(new Set(registry.all())).toEqual(new Set(left.filter((r) => r.projectId !== 'p0')));
    expect(registry.revokeKey('k1')).toBe(0);
    expect(registry.revokeKey('nobody')).toBe(0);
  });

  it('is empty again once everything is removed, and registers a request only once', () => {
    const registry = new InFlightRegistry();
    const a = new FakeRequest('k', 'p');
    registry.add(a);
    registry.add(a);
    expect(registry.size).toBe(1);
    registry.remove(a);
    expect(registry.size).toBe(0);
    expect(registry.all()).toEqual([]);
    // A request added after its key's list emptied is found again.
    const b = new FakeRequest('k', 'p');
    registry.add(b);
    expect(registry.revokeKey('k')).toBe(1);
    expect(registry.revokeProject('p')).toBe(0);
  });

  it('revokes every request of a key even when revoking one ends another', () => {
    const registry = new InFlightRegistry();
    const other = new FakeRequest('k', 'p');
    const first = new FakeRequest('k', 'p', () => registry.remove(other));
    registry.add(other);
    registry.add(first);
    expect(registry.revokeKey('k', Errors.keyExpired())).toBe(2);
    expect(first.revokedWith).toHaveLength(1);
    expect(other.revokedWith).toHaveLength(1);
    expect(registry.size).toBe(0);
  });

  it("ends a key's requests when it expires, and stops watching once they are gone", () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const registry = new InFlightRegistry();
    const a = new FakeRequest('expiring', 'p');
    const b = new FakeRequest('expiring', 'p');
    const c = new FakeRequest('lasting', 'p');
    registry.add(a, 1_000_500);
    registry.add(b, 1_000_500);
    registry.add(c, null);
    expect(registry.watchedExpiries).toBe(1);
    vi.advanceTimersByTime(499);
    expect(a.revokedWith).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(a.revokedWith.map((e) => e?.code)).toEqual(['UNAUTHORIZED']);
    expect(b.revokedWith.map((e) => e?.code)).toEqual(['UNAUTHORIZED']);
    expect(c.revokedWith).toEqual([]);
    expect(registry.size).toBe(1);

    const d = new FakeRequest('later', 'p');
    registry.add(d, 2_000_000);
    expect(registry.watchedExpiries).toBe(1);
    registry.remove(d);
    // Kept while idle lists are few: the next request on the key finds its list and its watch.
    expect(registry.watchedExpiries).toBe(1);
    for (let i = 0; i <= IDLE_LISTS_KEPT; i++) {
      const once = new FakeRequest(`once-${i}`, 'q');
      registry.add(once, null);
      registry.remove(once);
    }
    expect(registry.watchedExpiries).toBe(0);
    expect(registry.size).toBe(1);
    expect(registry.revokeKey('lasting')).toBe(1);
  });

  it('keeps one list for a key whose requests come one at a time, and a bounded number of idle ones', () => {
    const registry = new InFlightRegistry();
    for (let i = 0; i < 10_000; i++) {
      const r = new FakeRequest('busy', 'p');
      registry.add(r, null);
      registry.remove(r);
    }
    expect(registry.keyLists).toBe(1);
    for (let i = 0; i < 5 * IDLE_LISTS_KEPT; i++) {
      const r = new FakeRequest(`key-${i}`, 'p');
      registry.add(r, null);
      registry.remove(r);
      expect(registry.keyLists).toBeLessThanOrEqual(IDLE_LISTS_KEPT + 1);
    }
    const still = new FakeRequest('busy', 'p');
    registry.add(still, null);
    expect(registry.revokeKey('busy')).toBe(1);
    expect(registry.revokeProject('p')).toBe(0);
  });
});
