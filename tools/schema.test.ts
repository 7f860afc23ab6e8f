import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ToolDefinition } from '../ports/tools.js';
import { toolSpec } from './index.js';
import { checkerOf, wireSchema } from './schema.js';
import { validateCall } from './validate-call.js';

const jsonSchemaTool: ToolDefinition = {
  name: 'lint',
  description: 'Lint a file.',
  parameters: { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', properties: { path: { type: 'string' }, fix: { type: 'boolean' } }, required: ['path'], additionalProperties: false },
  readOnly: true,
  idempotent: true,
  present: (a: { path: string }) => `lint ${a.path}`,
  execute: async () => ({ status: 'ok', content: 'ok' }),
};

describe('tool parameters as a plain JSON Schema (MCP tools, plugins in plain JavaScript)', () => {
  it('reach the wire as given, less $schema (I7)', () => {
    expect(toolSpec(jsonSchemaTool).parameters).toEqual({ type: 'object', properties: { path: { type: 'string' }, fix: { type: 'boolean' } }, required: ['path'], additionalProperties: false });
  });

  it('are checked before dispatch like a zod schema (I4): a missing field, a wrong type, an extra key are rejected; a good call passes', () => {
    const tools = [jsonSchemaTool];
    expect(validateCall(tools, 'lint', '{"path":"a.ts"}')).toMatchObject({ ok: true, args: { path: 'a.ts' } });
    expect(validateCall(tools, 'lint', '{}')).toMatchObject({ ok: false, code: 'INVALID_ARGUMENTS' });
    expect(validateCall(tools, 'lint', '{"path":3}')).toMatchObject({ ok: false, code: 'INVALID_ARGUMENTS' });
    expect(validateCall(tools, 'lint', '{"path":"a","colour":"red"}')).toMatchObject({ ok: false, code: 'INVALID_ARGUMENTS' });
  });

  it('build their checker once; a zod schema is its own checker and its wire form its JSON Schema', () => {
    expect(checkerOf(jsonSchemaTool.parameters)).toBe(checkerOf(jsonSchemaTool.parameters));
    const zod = z.strictObject({ n: z.int() });
    expect(checkerOf(zod)).toBe(zod);
    expect(wireSchema(zod)).toMatchObject({ type: 'object', properties: { n: { type: 'integer' } } });
  });
});
