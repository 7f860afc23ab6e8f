import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ToolCallEvent } from '../machines/tool-call.machine.js';
import type { ToolDefinition } from '../ports/tools.js';
import { validateCallAction, validationOf } from './validate-call.js';

const tool = (name: string, parameters: z.ZodType): ToolDefinition =>
  ({ name, description: name, parameters, readOnly: true, idempotent: true, present: () => name, execute: async () => ({ status: 'ok', content: '' }) }) as ToolDefinition;

describe('the validateCall action', () => {
  const tools = new Map([
    ['echo', tool('echo', z.strictObject({ text: z.string() }))],
    [
      'odd',
      tool(
        'odd',
        z.strictObject({}).superRefine(() => {
          throw new Error('refinement blew up');
        }),
      ),
    ],
  ]);

  it('answers the call once with its validation', () => {
    const sent: ToolCallEvent[] = [];
    validateCallAction(() => tools)({ self: { send: (e) => void sent.push(e) } }, { name: 'echo', arguments: '{"text":"hi"}' });
    expect(sent).toEqual([{ type: 'tool.call.validated', validation: { ok: true, readOnly: true, idempotent: true, args: { text: 'hi' } } }]);
  });

  it('rejects unknown tools and bad arguments (I4), and a schema that throws, without throwing', () => {
    expect(validationOf(tools, 'nope', '{}')).toMatchObject({ ok: false, code: 'UNKNOWN_TOOL' });
    expect(validationOf(tools, 'echo', '{"text":1}')).toMatchObject({ ok: false, code: 'INVALID_ARGUMENTS' });
    expect(validationOf(tools, 'odd', '{}')).toMatchObject({ ok: false, code: 'VALIDATION_ERROR', message: expect.stringContaining('refinement blew up') });
  });
});
