import { describe, expect, it } from 'vitest';
import { validateCall } from '../../tools/validate-call.js';
import { toolSpec } from '../../tools/index.js';
import { bridleToolName, bridleTools, serverName, type McpToolInfo } from './tools.js';

const schema = (properties: Record<string, unknown>, required: string[] = []) => ({ type: 'object', properties, required, $schema: 'http://json-schema.org/draft-07/schema#' });
const never = async () => ({ status: 'ok' as const, content: '' });

describe('MCP tools as bridle tools', () => {
  it('are named mcp__<server>__<tool>, with what the wire refuses made `_`', () => {
    expect(serverName('mcp:fs')).toBe('fs');
    expect(serverName('mcp:my server')).toBe('my_server');
    expect(bridleToolName('mcp:fs', 'read_file')).toBe('mcp__fs__read_file');
    expect(bridleToolName('mcp:fs', 'files.read/v2')).toBe('mcp__fs__files_read_v2');
  });

  it('are read-only only when the server says readOnlyHint: true and its row says trusted: true; idempotent when hinted read-only or idempotentHint', () => {
    const listed: McpToolInfo[] = [
      { name: 'look', inputSchema: schema({}), annotations: { readOnlyHint: true } },
      { name: 'put', inputSchema: schema({}), annotations: { idempotentHint: true } },
      { name: 'poke', inputSchema: schema({}), annotations: { readOnlyHint: false } },
      { name: 'plain', description: 'no hints', inputSchema: schema({}) },
    ];
    const { tools, problems } = bridleTools('mcp:s', listed, never, 1000, { trusted: true });
    expect(problems).toEqual([]);
    expect(tools.map((t) => [t.name, t.readOnly, t.idempotent, t.timeoutMs])).toEqual([
      ['mcp__s__look', true, true, 1000],
      ['mcp__s__put', false, true, 1000],
      ['mcp__s__poke', false, false, 1000],
      ['mcp__s__plain', false, false, 1000],
    ]);
    expect(tools[0]!.writeReason).toBeUndefined();
    expect(tools[0]!.description).toBe('The look tool of the MCP server s.');
    expect(tools[3]!.present({ a: 1 })).toBe('s: plain {"a":1}');
  });

  it('an untrusted server\'s readOnlyHint is not taken: every tool is a write for approval, with the reason named (issue 20, item 3)', () => {
    const listed: McpToolInfo[] = [
      { name: 'look', inputSchema: schema({}), annotations: { readOnlyHint: true } },
      { name: 'plain', inputSchema: schema({}) },
    ];
    const { tools } = bridleTools('mcp:s', listed, never, 1000);
    expect(tools.map((t) => [t.name, t.readOnly])).toEqual([
      ['mcp__s__look', false],
      ['mcp__s__plain', false],
    ]);
    expect(tools[0]!.writeReason).toBe('mcp__s__look is a tool of the MCP server mcp:s, which runs outside the sandbox and its row does not say trusted: true, so its readOnlyHint is not taken');
    expect(tools[1]!.writeReason).toBe('mcp__s__plain is a tool of the MCP server mcp:s, which runs outside the sandbox');
    expect(bridleTools('mcp:s', listed, never, 1000, { trusted: false }).tools[0]!.readOnly).toBe(false);
  });

  it('leave out, with a line each, a schema zod cannot read, a name too long for the wire, a name that collides', () => {
    const listed: McpToolInfo[] = [
      { name: 'ok', inputSchema: schema({ a: { type: 'string' } }) },
      { name: 'typo', inputSchema: schema({ a: { type: 'strnig' } }) },
      { name: 'remote', inputSchema: schema({ a: { $ref: 'https://example.com/s.json' } }) },
      { name: 'x'.repeat(60), inputSchema: schema({}) },
      { name: 'o.k', inputSchema: schema({}) },
      { name: 'o/k', inputSchema: schema({}) },
    ];
    const { tools, problems } = bridleTools('mcp:s', listed, never, 1000);
    expect(tools.map((t) => t.name)).toEqual(['mcp__s__ok', 'mcp__s__o_k']);
    expect(problems).toHaveLength(4);
    expect(problems[0]).toMatch(/^"typo" left out: its input schema cannot be checked \(Unsupported type: strnig\)/);
    expect(problems[1]).toMatch(/^"remote" left out: its input schema cannot be checked \(External \$ref/);
    expect(problems[2]).toMatch(/longer than the 64 characters/);
    expect(problems[3]).toBe('"o/k" left out: it is mcp__s__o_k once its name is made safe for the wire, as "o.k" already is');
  });

  it('reach the wire as the server\'s schema without $schema, and are checked against it before anything runs (I4, I7)', () => {
    const { tools } = bridleTools('mcp:s', [{ name: 'note', inputSchema: schema({ file: { type: 'string', pattern: '^[a-z]+\\.txt$' } }, ['file']) }], never, 1000);
    expect(toolSpec(tools[0]!)).toEqual({ name: 'mcp__s__note', description: 'The note tool of the MCP server s.', parameters: { type: 'object', properties: { file: { type: 'string', pattern: '^[a-z]+\\.txt$' } }, required: ['file'] } });
    expect(validateCall(tools, 'mcp__s__note', '{"file":"a.txt"}')).toMatchObject({ ok: true, args: { file: 'a.txt' } });
    expect(validateCall(tools, 'mcp__s__note', '{"file":"../etc/passwd"}')).toMatchObject({ ok: false, code: 'INVALID_ARGUMENTS' });
    expect(validateCall(tools, 'mcp__s__note', '{}')).toMatchObject({ ok: false, code: 'INVALID_ARGUMENTS' });
  });

  it('a ReDoS pattern in a server\'s schema does not hold the main loop: the call passes bridle\'s check at once, while a timer keeps firing (issue 20, item 8)', async () => {
    const { tools } = bridleTools('mcp:s', [{ name: 'match', inputSchema: schema({ text: { type: 'string', pattern: '^(a+)+$' } }, ['text']) }], never, 1000);
    // The model is still shown the server's pattern.
    expect(toolSpec(tools[0]!).parameters).toMatchObject({ properties: { text: { pattern: '^(a+)+$' } } });
    let last = performance.now();
    let maxLag = 0;
    const timer = setInterval(() => {
      const now = performance.now();
      maxLag = Math.max(maxLag, now - last);
      last = now;
    }, 20);
    try {
      await new Promise((r) => setTimeout(r, 60));
      const started = performance.now();
      // 24 `a`s and a `!`: seconds of backtracking for V8 on this pattern.
      const v = validateCall(tools, 'mcp__s__match', JSON.stringify({ text: `${'a'.repeat(24)}!` }));
      expect(performance.now() - started).toBeLessThan(500);
      expect(v).toMatchObject({ ok: true });
      await new Promise((r) => setTimeout(r, 100));
    } finally {
      clearInterval(timer);
    }
    expect(maxLag).toBeLessThan(1000);
  });
});
