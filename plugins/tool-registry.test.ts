import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ToolDefinition } from '../ports/tools.js';
import { DuplicateToolError } from '../ports/tool-registry.js';
import { Tools } from './tool-registry.js';

const tool = (name: string): ToolDefinition => ({ name, description: name, parameters: z.object({}), readOnly: true, idempotent: true, execute: async () => ({ status: 'ok', content: '' }), present: () => name });
const names = (t: Tools) => t.list().map((x) => x.name);

describe('the tools service', () => {
  it('lists tools by their owner\'s rank, then in registration order: a late owner lands where it ranks', () => {
    const rank = new Map([['a', 0], ['b', 1], ['c', 2]]);
    const tools = new Tools(undefined, (o) => rank.get(o) ?? Number.POSITIVE_INFINITY);
    tools.register(tool('a1'), 'a');
    tools.register(tool('c1'), 'c');
    tools.register(tool('x1'), 'unranked');
    // b's tools arrive last, as a server that answered late would register them.
    tools.register(tool('b1'), 'b');
    tools.register(tool('b2'), 'b');
    tools.register(tool('a2'), 'a');
    expect(names(tools)).toEqual(['a1', 'a2', 'b1', 'b2', 'c1', 'x1']);
  });

  it('without a rank, registration order; a disposer removes once and bumps the version; a taken name throws naming both owners', () => {
    const tools = new Tools();
    const off = tools.register(tool('one'), 'p');
    tools.register(tool('two'), 'q');
    expect(names(tools)).toEqual(['one', 'two']);
    const v = tools.version;
    off();
    off();
    expect(names(tools)).toEqual(['two']);
    expect(tools.version).toBe(v + 1);
    expect(() => tools.register(tool('two'), 'r')).toThrow(DuplicateToolError);
    expect(() => tools.register(tool('two'), 'r')).toThrow('by q and by r');
  });

  it('a scoped tool shadows a same-named global one, also one that registers after it; globals still may not collide', () => {
    const tools = new Tools();
    tools.register(tool('read_file'), 'tool:read_file');
    const own = { ...tool('read_file'), description: 'own' };
    const off = tools.registerScoped(own);
    tools.register(tool('late'), 'mcp');
    expect(tools.list()).toEqual([own, tool('late')].map((t) => expect.objectContaining({ name: t.name, description: t.description })));
    expect(tools.get('read_file')).toBe(own);
    expect(tools.ownerOf('read_file')).toBe('scoped');
    // A global that answers late (an MCP server) is shadowed too, not refused.
    const other = new Tools();
    other.registerScoped(own);
    expect(() => other.register(tool('read_file'), 'mcp')).not.toThrow();
    expect(other.get('read_file')).toBe(own);
    expect(names(other)).toEqual(['read_file']);
    expect(() => other.register(tool('read_file'), 'mcp2')).toThrow('by mcp and by mcp2');
    expect(() => other.registerScoped(tool('read_file'))).toThrow(DuplicateToolError);
    off();
    expect(tools.get('read_file')?.description).toBe('read_file');
    expect(names(tools)).toEqual(['read_file', 'late']);
  });
});
