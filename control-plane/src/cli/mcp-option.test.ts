import { describe, expect, it } from 'vitest';
import { UsageError } from './cli-errors.js';
import { describeMcp, parseMcpOption } from './mcp-option.js';

describe('gatewayctl --mcp', () => {
  it('reads servers with every tool or some, and none', () => {
    expect(parseMcpOption('docs;tickets=search,get_ticket')).toEqual({ servers: { docs: { tools: '*' }, tickets: { tools: ['search', 'get_ticket'] } } });
    expect(parseMcpOption('docs=*')).toEqual({ servers: { docs: { tools: '*' } } });
    expect(parseMcpOption('none')).toBeNull();
    expect(describeMcp(parseMcpOption('docs;tickets=a,b'))).toEqual(['docs=*', 'tickets=a,b']);
    expect(describeMcp(null)).toBeNull();
  });

  it('refuses what names no server or no tool', () => {
    expect(() => parseMcpOption('=a')).toThrow(UsageError);
    expect(() => parseMcpOption('docs=')).toThrow(UsageError);
    expect(() => parseMcpOption(';')).toThrow(UsageError);
    expect(() => parseMcpOption('{not json')).toThrow(UsageError);
  });

  it('takes the setting as JSON for prompts and resources, and shows them', () => {
    const setting = { servers: { docs: { tools: '*' as const, prompts: ['summary'], resources: ['docs://public/*'] } } };
    expect(parseMcpOption(JSON.stringify(setting))).toEqual(setting);
    expect(describeMcp(setting)).toEqual(['docs=* prompts=summary resources=docs://public/*']);
  });
});
