import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createActor, fromPromise } from 'xstate';
import { toolCallMachine } from '../machines/tool-call.machine.js';
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

  // No event answers it (ADR 0033): a call is validated as it is created, and is past `validating` before it starts.
  it('assigns the call its validation as it is created: valid goes on to checking, invalid to its flushed rejection', () => {
    const never = fromPromise(() => new Promise<never>(() => undefined)) as never;
    const machine = toolCallMachine.provide({
      actions: { validateCall: validateCallAction(() => tools), record: () => undefined },
      actors: { decideCall: never, askApproval: never, executeTool: never, flushLog: never },
    });
    const input = { turn: 't1', step: 't1.s1', callId: 't1.s1.c1', toolCallId: 'call_1', name: 'echo' };
    const valid = createActor(machine, { input: { ...input, arguments: '{"text":"hi"}' } });
    expect(valid.getSnapshot().value).toBe('checking');
    expect(valid.getSnapshot().context.validation).toEqual({ ok: true, readOnly: true, idempotent: true, args: { text: 'hi' } });
    const invalid = createActor(machine, { input: { ...input, arguments: '{"text":1}' } });
    expect(invalid.getSnapshot().value).toBe('flushingResult');
    expect(invalid.getSnapshot().context.validation).toMatchObject({ ok: false, code: 'INVALID_ARGUMENTS' });
  });

  it('rejects unknown tools and bad arguments (I4), and a schema that throws, without throwing', () => {
    expect(validationOf(tools, 'nope', '{}')).toMatchObject({ ok: false, code: 'UNKNOWN_TOOL' });
    expect(validationOf(tools, 'echo', '{"text":1}')).toMatchObject({ ok: false, code: 'INVALID_ARGUMENTS' });
    expect(validationOf(tools, 'odd', '{}')).toMatchObject({ ok: false, code: 'VALIDATION_ERROR', message: expect.stringContaining('refinement blew up') });
  });
});
