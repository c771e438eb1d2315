import { describe, expect, it } from 'vitest';
import { parseProvidersFile } from './providers-file.js';

const TYPES = [{ type: 'mock', defaultBaseUrl: null, usesBaseUrl: false }];
const PROVIDERS = 'providers:\n  - { name: mock, type: mock, models: [m] }\n';
const parse = (mcp: string, env: Record<string, string> = {}) => parseProvidersFile(PROVIDERS + mcp, 'providers.yaml', env, TYPES);

describe('mcp_servers in the providers file', () => {
  it('reads servers with ${VAR} headers and a price per call, and none when the block is absent', () => {
    const cfg = parse(
      `mcp_servers:
  - name: docs
    url: http://127.0.0.1:9200/mcp
    headers: { Authorization: "Bearer \${DOCS_TOKEN}", X-Team: search }
    price_per_call: 0.002
  - { name: tickets_v2, url: "https://tickets.example/mcp" }
`,
      { DOCS_TOKEN: 'tok-1' },
    );
    expect(cfg.mcp_servers).toEqual([
      { name: 'docs', url: 'http://127.0.0.1:9200/mcp', headers: { authorization: 'Bearer tok-1', 'x-team': 'search' }, price_per_call: 0.002, connect_timeout_ms: 5_000, timeout_ms: 60_000 },
      { name: 'tickets_v2', url: 'https://tickets.example/mcp', headers: {}, price_per_call: null, connect_timeout_ms: 5_000, timeout_ms: 60_000 },
    ]);
    expect(parse('').mcp_servers).toEqual([]);
  });

  it('refuses what the gateway could not serve, naming the entry and never a header value', () => {
    expect(() => parse('mcp_servers:\n  - { name: "a__b", url: "http://x/mcp" }\n')).toThrow(/"name"/);
    expect(() => parse('mcp_servers:\n  - { name: a, url: "ftp://x/mcp" }\n')).toThrow(/http or https/);
    expect(() => parse('mcp_servers:\n  - { name: a, url: "http://x/mcp" }\n  - { name: a, url: "http://y/mcp" }\n')).toThrow(/used twice/);
    expect(() => parse('mcp_servers:\n  - { name: a, url: "http://x/mcp", headers: { Mcp-Session-Id: x } }\n')).toThrow(/may not set/);
    expect(() => parse('mcp_servers:\n  - { name: a, url: "http://x/mcp", price_per_call: -1 }\n')).toThrow(/price_per_call/);
    expect(() => parse('mcp_servers:\n  - { name: a, url: "http://x/mcp", token: x }\n')).toThrow(/unknown field "token"/);
    expect(() => parse('mcp_servers:\n  - { name: a, url: "http://x/mcp", headers: { Authorization: "Bearer ${NOPE}" } }\n')).toThrow(/\$\{NOPE\}, which is not set/);
  });
});
