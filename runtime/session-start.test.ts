/**
 * A session whose plugins start asynchronously (an MCP server connecting):
 * input waits until they have, so the first request's tools never depend on
 * how fast a plugin was; the order of input is kept; `end()` starts none of
 * what was sent meanwhile (it stays queued in the log); `close()` awaits the `session/close` listeners.
 */
import { pendingInputs } from '../log/inputs.js';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Plugin } from '../plugins/host.js';
import type { ToolDefinition } from '../ports/tools.js';
import { createHarness, type Harness } from '../test/helpers/harness.js';

let h: Harness | undefined;
afterEach(() => h?.cleanup());

const lateTool: ToolDefinition = { name: 'late_tool', description: 'registered after a while', parameters: z.object({}), readOnly: true, idempotent: true, execute: async () => ({ status: 'ok', content: 'late' }), present: () => 'late_tool' };

/** Registers `late_tool` after `ms`, as a server that takes a while to answer would. */
const slowStart = (ms: number, events: string[] = []): Plugin => ({
  name: 'slow-start',
  async apply(ctx) {
    await new Promise((r) => setTimeout(r, ms));
    ctx.tools.register(lateTool);
    events.push('registered');
    ctx.hooks.on('session/close', async () => {
      await new Promise((r) => setTimeout(r, 30));
      events.push('stopped');
    });
  },
});

const toolNames = (h: Harness, i: number) => (h.requests[i]?.request.tools ?? []).map((t) => t.name);

describe('a session with plugins still starting', () => {
  it('holds its first turn until they have started: the first request already lists the late tool', async () => {
    h = createHarness((_r, i) => (i === 0 ? { toolCalls: [{ name: 'late_tool', arguments: {} }] } : { text: 'ok' }), { plugins: [slowStart(80)] });
    expect(h.session.host.starting()).toBe(true);
    const out = await h.session.run('go');
    expect(out.reason).toBe('completed');
    expect(toolNames(h, 0)).toContain('late_tool');
    expect(h.entries().find((e) => e.kind === 'tool/result')).toMatchObject({ status: 'ok', content: 'late' });
  });

  it('keeps the order of input sent before the start, and ready() resolves once started', async () => {
    const events: string[] = [];
    h = createHarness(() => ({ text: 'ok' }), { plugins: [slowStart(40, events)] });
    h.session.send('first');
    h.session.send('second');
    h.session.send('context for the next step', 'inject');
    await h.session.ready();
    expect(events).toEqual(['registered']);
    await h.session.idle();
    const inputs = h.entries().filter((e) => e.kind === 'turn/start').map((e) => (e as { input: string }).input);
    expect(inputs).toEqual(['first', 'second']);
  });

  it('end() before the start runs no turn: the input sent meanwhile is logged and stays queued for a resume (ADR 0021); close() awaits session/close listeners', async () => {
    const events: string[] = [];
    h = createHarness(() => ({ text: 'ok' }), { plugins: [slowStart(40, events)] });
    const sent = h.session.send('runs after a resume');
    await h.session.end();
    expect(h.entries().some((e) => e.kind === 'turn/start')).toBe(false);
    expect(pendingInputs(h.entries()).map((e) => e.text)).toEqual(['runs after a resume']);
    expect(await sent).toBe(h.entries().find((e) => e.kind === 'session/input')!.seq);
    expect(events).toEqual(['registered', 'stopped']);
  });

  it('a session whose plugins all start synchronously takes input at once', () => {
    h = createHarness(() => ({ text: 'ok' }));
    expect(h.session.host.starting()).toBe(false);
    h.session.send('now');
    expect(h.session.actor.getSnapshot().value).not.toBe('idle');
  });
});
