import { describe, expect, it } from 'vitest';
import type { ComposedRow } from '../../plugins/rows.js';
import { mcpServerRows, patchRows } from './mcp-rows.js';

describe('the client\'s MCP servers as rows', () => {
  it('stdio servers become { command, args, env }, HTTP servers { url } (headers when sent)', () => {
    expect(
      mcpServerRows([
        { name: 'files', command: '/usr/bin/mcp-files', args: ['--root', '/ws'], env: [{ name: 'TOKEN', value: 't' }] },
        { type: 'http', name: 'docs', url: 'http://127.0.0.1:9000/mcp', headers: [] },
        { type: 'http', name: 'auth', url: 'http://127.0.0.1:9001/mcp', headers: [{ name: 'Authorization', value: 'Bearer x' }] },
      ]),
    ).toEqual([
      { id: 'mcp:files', use: 'mcp', config: { command: '/usr/bin/mcp-files', args: ['--root', '/ws'], env: { TOKEN: 't' } } },
      { id: 'mcp:docs', use: 'mcp', config: { url: 'http://127.0.0.1:9000/mcp' } },
      { id: 'mcp:auth', use: 'mcp', config: { url: 'http://127.0.0.1:9001/mcp', headers: { Authorization: 'Bearer x' } } },
    ]);
    expect(mcpServerRows([])).toEqual([]);
  });

  it('refuses two servers of one name, an empty name, and SSE (not offered)', () => {
    const s = { name: 'x', command: 'x', args: [], env: [] };
    expect(() => mcpServerRows([s, s])).toThrow(/two MCP servers are named "x"/);
    expect(() => mcpServerRows([{ ...s, name: ' ' }])).toThrow(/empty name/);
    expect(() => mcpServerRows([{ type: 'sse', name: 'old', url: 'http://127.0.0.1/sse', headers: [] }])).toThrow(/SSE/);
  });

  it('patches them over the composed rows: a row of the same id is replaced in place, others are added; each says it came from the client', () => {
    const rows: ComposedRow[] = [
      { id: 'model', use: 'scripted', from: 'flag' },
      { id: 'mcp:files', use: 'mcp', config: { command: 'old' }, from: 'home' },
      { id: 'tool:bash', use: 'bash', from: 'bundle base' },
    ];
    const out = patchRows(rows, [{ id: 'mcp:files', use: 'mcp', config: { command: 'new' } }, { id: 'mcp:docs', use: 'mcp', config: { url: 'http://127.0.0.1/' } }], 'acp client');
    expect(out.map((r) => [r.id, r.from])).toEqual([['model', 'flag'], ['mcp:files', 'acp client'], ['tool:bash', 'bundle base'], ['mcp:docs', 'acp client']]);
    expect(out[1]!.config).toEqual({ command: 'new' });
  });
});
