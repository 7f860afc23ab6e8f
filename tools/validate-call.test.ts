import { describe, expect, it } from 'vitest';
import { builtinTools } from './index.js';
import { validateCall } from './validate-call.js';

const tools = builtinTools();
const map = new Map(tools.map((t) => [t.name, t]));

describe('validateCall', () => {
  it('accepts a known tool with valid arguments, from an array or a map', () => {
    for (const registry of [tools, map]) {
      const r = validateCall(registry, 'read_file', '{"path":"a.ts","offset":3}');
      expect(r).toMatchObject({ ok: true, args: { path: 'a.ts', offset: 3 } });
      if (r.ok) expect(r.tool.name).toBe('read_file');
    }
  });

  it('rejects an unknown tool, listing the available ones', () => {
    const r = validateCall(map, 'delete_everything', '{}');
    expect(r).toEqual({
      ok: false,
      code: 'UNKNOWN_TOOL',
      message: 'Unknown tool "delete_everything". Available tools: read_file, write_file, edit_file, list_dir, glob, grep, bash.',
    });
    expect(validateCall([], 'x', '{}')).toMatchObject({ code: 'UNKNOWN_TOOL', message: expect.stringContaining('(none)') });
  });

  it('rejects bad JSON with the parse error and an excerpt', () => {
    const r = validateCall(tools, 'bash', '{"command": "ls"');
    expect(r).toMatchObject({ ok: false, code: 'INVALID_JSON' });
    if (!r.ok) {
      expect(r.message).toContain('The arguments for bash are not valid JSON');
      expect(r.message).toContain('Received: {"command": "ls"');
    }
    const long = validateCall(tools, 'bash', `{"command": "${'x'.repeat(500)}`);
    if (!long.ok) expect(long.message).toContain('… (513 chars)');
  });

  it('rejects arguments failing the schema with a readable message', () => {
    const r = validateCall(tools, 'read_file', '{"path": 5, "mode": "fast"}');
    expect(r).toMatchObject({ ok: false, code: 'INVALID_ARGUMENTS' });
    if (!r.ok) {
      expect(r.message).toContain('Invalid arguments for read_file:');
      expect(r.message).toContain('→ at path');
      expect(r.message).toContain('Unrecognized key: "mode"');
    }
    expect(validateCall(tools, 'read_file', '[]')).toMatchObject({ code: 'INVALID_ARGUMENTS' });
    expect(validateCall(tools, 'read_file', 'null')).toMatchObject({ code: 'INVALID_ARGUMENTS' });
  });

  it('treats empty arguments text as {}', () => {
    expect(validateCall(tools, 'list_dir', '')).toMatchObject({ ok: true, args: {} });
    expect(validateCall(tools, 'list_dir', '  \n')).toMatchObject({ ok: true, args: {} });
    expect(validateCall(tools, 'read_file', '')).toMatchObject({ ok: false, code: 'INVALID_ARGUMENTS' });
  });
});
