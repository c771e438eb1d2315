import { describe, expect, it } from 'vitest';
import { exitCode, spawnNode } from '../test-support/processes.js';

/** `npm run start:*`, `migrate` and `admin` run the build through deploy/run-built.js. */
describe('run-built', () => {
  it('says to build first, not a stack trace, when the build is missing', async () => {
    const child = spawnNode('deploy/run-built.js', ['proxy/dist/not-built.js']);
    expect(await exitCode(child)).toBe(1);
    expect(child.output()).toBe('proxy/dist/not-built.js is not built; run npm run build first.\n');
  });

  it("passes the service its own arguments, as if started directly", async () => {
    const child = spawnNode('deploy/run-built.js', ['control-plane/dist/migrate-main.js', '--drop-before', 'soon']);
    expect(await exitCode(child)).toBe(1);
    expect(child.output()).toBe('migrate: --drop-before takes a month as YYYY-MM\n');
  });
});
