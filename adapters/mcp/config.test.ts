import { describe, expect, it } from 'vitest';
import { McpConfig } from './config.js';

const issues = (v: unknown) => {
  const r = McpConfig.safeParse(v);
  return r.success ? [] : r.error.issues.map((i) => `${i.path.join('.') || 'config'}: ${i.message}`);
};

describe('the mcp row\'s config', () => {
  it('is a stdio server { command, args?, env? } or an HTTP one { url, headers? }, with the deadlines filled in and trusted false unless it says so', () => {
    expect(McpConfig.parse({ command: 'x', trusted: true })).toMatchObject({ trusted: true });
    expect(McpConfig.parse({ command: 'npx', args: ['-y', 'x'], env: { A: 'b' } })).toEqual({ command: 'npx', args: ['-y', 'x'], env: { A: 'b' }, timeoutMs: 120_000, startTimeoutMs: 30_000, trusted: false });
    expect(McpConfig.parse({ url: 'http://127.0.0.1:9/mcp', headers: { Authorization: 'Bearer t' }, timeoutMs: 5000 })).toEqual({ url: 'http://127.0.0.1:9/mcp', headers: { Authorization: 'Bearer t' }, timeoutMs: 5000, startTimeoutMs: 30_000, trusted: false });
  });

  it('says which keys go together when it is neither, or both; refuses what does not belong', () => {
    const either = 'config: give either command (a server started over stdio, with args and env) or url (a streamable HTTP server, with headers)';
    expect(issues({})).toEqual([either]);
    expect(issues({ command: 'x', url: 'http://a' })).toEqual([either]);
    expect(issues({ url: 'file:///etc/passwd' })).toEqual(['url: url must be an http:// or https:// URL']);
    expect(issues({ command: 'x', headers: {} })).toEqual(['config: Unrecognized key: "headers"']);
    expect(issues({ command: 'x', env: { A: 1 } })).toHaveLength(1);
    expect(issues({ command: 'x', timeoutMs: 0 })).toHaveLength(1);
  });
});
