import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { executeTool, STOP_GRACE_MS } from './execute-tool.js';
import { createMemoryFs } from '../adapters/fs/memory.js';
import { createMemorySubprocess } from '../adapters/subprocess/memory.js';
import { ToolError } from '../ports/tool-error.js';
import type { ToolContext, ToolDefinition, ToolOutput } from '../ports/tools.js';

function ctxWith(signal = new AbortController().signal): ToolContext {
  return { fs: createMemoryFs(), subprocess: createMemorySubprocess(), signal };
}

function tool(execute: ToolDefinition['execute'], timeoutMs?: number): ToolDefinition {
  return {
    name: 'probe',
    description: 'test tool',
    parameters: z.strictObject({}),
    readOnly: true,
    idempotent: true,
    timeoutMs,
    execute,
    present: () => 'probe',
  };
}

/** A tool that waits until its signal fires, recording that it saw it. */
function waitsForSignal(seen: { aborted?: unknown }): ToolDefinition['execute'] {
  return (_args, ctx) =>
    new Promise<ToolOutput>((resolve) => {
      ctx.signal.addEventListener('abort', () => {
        seen.aborted = ctx.signal.reason;
        resolve({ status: 'error', code: 'SELF', content: 'stopped' });
      });
    });
}

afterEach(() => vi.useRealTimers());

describe('executeTool', () => {
  it('passes a successful result through', async () => {
    const out = await executeTool(tool(async () => ({ status: 'ok', content: 'fine' })), {}, ctxWith());
    expect(out).toEqual({ status: 'ok', content: 'fine' });
  });

  it('turns throws into error results, keeping a ToolError code', async () => {
    const named = await executeTool(tool(async () => { throw new ToolError('NOT_FOUND', 'gone'); }), {}, ctxWith());
    expect(named).toEqual({ status: 'error', code: 'NOT_FOUND', content: 'gone' });
    const plain = await executeTool(tool(() => { throw new Error('kaput'); }), {}, ctxWith());
    expect(plain).toEqual({ status: 'error', code: 'TOOL_ERROR', content: 'kaput' });
    const odd = await executeTool(tool(async () => { throw 'a string'; }), {}, ctxWith());
    expect(odd).toEqual({ status: 'error', code: 'TOOL_ERROR', content: 'a string' });
    const bogus = await executeTool(tool(async () => undefined as unknown as ToolOutput), {}, ctxWith());
    expect(bogus).toMatchObject({ status: 'error', code: 'TOOL_ERROR' });
  });

  it('does not start a tool when the signal is already aborted', async () => {
    const execute = vi.fn(async () => ({ status: 'ok' as const, content: '' }));
    const out = await executeTool(tool(execute), {}, ctxWith(AbortSignal.abort()));
    expect(out).toMatchObject({ status: 'error', code: 'ABORTED' });
    expect(execute).not.toHaveBeenCalled();
  });

  it('answers ABORTED when aborted during the call, and the tool sees its signal fire', async () => {
    const controller = new AbortController();
    const seen: { aborted?: unknown } = {};
    const pending = executeTool(tool(waitsForSignal(seen)), {}, ctxWith(controller.signal));
    controller.abort(new Error('user cancelled'));
    expect(await pending).toMatchObject({ status: 'error', code: 'ABORTED' });
    expect(seen.aborted).toBeInstanceOf(Error);
  });

  it('answers ABORTED even for a tool that ignores its signal', async () => {
    const controller = new AbortController();
    const pending = executeTool(tool(() => new Promise(() => {})), {}, ctxWith(controller.signal));
    controller.abort();
    expect(await pending).toMatchObject({ code: 'ABORTED' });
  });

  it('enforces tool.timeoutMs, aborting the signal the tool got', async () => {
    vi.useFakeTimers();
    const seen: { aborted?: unknown } = {};
    const pending = executeTool(tool(waitsForSignal(seen), 5_000), {}, ctxWith());
    await vi.advanceTimersByTimeAsync(4_999);
    expect(seen.aborted).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    const out = await pending;
    expect(out).toMatchObject({ status: 'error', code: 'TOOL_TIMEOUT' });
    expect(out.content).toContain('5000 ms');
    expect(seen.aborted).toBeInstanceOf(ToolError);
  });

  it('lets an explicit timeout override the tool default, and clears its timer', async () => {
    vi.useFakeTimers();
    const stuck = tool(() => new Promise(() => {}), 60_000);
    const pending = executeTool(stuck, {}, ctxWith(), { timeoutMs: 10 });
    await vi.advanceTimersByTimeAsync(20);
    expect(await pending).toMatchObject({ code: 'TOOL_TIMEOUT' });

    await executeTool(tool(async () => ({ status: 'ok', content: '' }), 60_000), {}, ctxWith());
    expect(vi.getTimerCount()).toBe(0);
  });

  it('a tool that ignores its deadline\'s abort is uncertain, not "stopped": its effect may or may not have happened', async () => {
    vi.useFakeTimers();
    const pending = executeTool(tool(() => new Promise(() => {}), 100), {}, ctxWith());
    await vi.advanceTimersByTimeAsync(100 + 100);
    const out = await pending;
    expect(out).toMatchObject({ status: 'unknown', code: 'TOOL_TIMEOUT' });
    expect(out.content).toContain('may or may not have happened');
    expect(out.content).not.toContain('was stopped');
  });

  it('a tool that settles after its deadline\'s abort confirmed it stopped, and waits no longer than it takes', async () => {
    vi.useFakeTimers();
    const seen: { aborted?: unknown } = {};
    const pending = executeTool(tool(waitsForSignal(seen), 100), {}, ctxWith());
    await vi.advanceTimersByTimeAsync(100);
    const out = await pending;
    expect(out).toMatchObject({ status: 'error', code: 'TOOL_TIMEOUT' });
    expect(out.content).toContain('was stopped');
  });

  it('gives a tool past its deadline at most STOP_GRACE_MS to settle', async () => {
    vi.useFakeTimers();
    const pending = executeTool(tool(() => new Promise(() => {}), 60_000), {}, ctxWith());
    let done = false;
    void pending.then(() => (done = true));
    await vi.advanceTimersByTimeAsync(60_000 + STOP_GRACE_MS - 1);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await pending).toMatchObject({ status: 'unknown' });
  });
});
