import { describe, expect, it } from 'vitest';
import { parseOpenFilesLimit, streamCapacity } from './stream-capacity.js';

const LIMITS = `Limit                     Soft Limit           Hard Limit           Units
Max cpu time              unlimited            unlimited            seconds
Max open files            20000                1048576              files
Max locked memory         8388608              8388608              bytes
`;

describe('stream capacity', () => {
  it('reads the soft open-files limit and allows two sockets per stream', () => {
    expect(parseOpenFilesLimit(LIMITS)).toBe(20_000);
    expect(streamCapacity(LIMITS)).toEqual({ openFiles: 20_000, streams: 9_936 });
  });

  it('says nothing it cannot read', () => {
    expect(streamCapacity('Limit Soft Hard\n')).toEqual({ openFiles: null, streams: null });
  });

  it('reads this process', () => {
    const own = streamCapacity();
    if (process.platform === 'linux') expect(own.streams).toBeGreaterThan(0);
    else expect(own.streams).toBeNull();
  });
});
