/**
 * A timeout never claims a certainty it does not have (ADR 0052, issue 22
 * item 2): a tool that has not settled after its deadline's abort may still be
 * acting, so its result is `uncertain` and the model is told its effect may or
 * may not have happened; a command whose process group was killed and reaped
 * may say it was stopped.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { EntryOf } from '../log/entries.js';
import type { ModelRequest } from '../log/messages.js';
import type { ToolDefinition } from '../ports/tools.js';
import { builtinTools } from '../tools/index.js';
import { createHarness, type Harness } from '../test/helpers/harness.js';

let h: Harness | undefined;
afterEach(() => h?.cleanup());

const toolText = (req: ModelRequest) => req.messages.flatMap((m) => (m.role === 'tool' ? [m.content] : []));
const results = (h: Harness) => h.entries().filter((e): e is EntryOf<'tool/result'> => e.kind === 'tool/result');

describe('a timeout that cannot confirm the tool stopped', () => {
  it('an in-process tool ignoring its abort yields uncertain, and the model text says its effect may or may not have happened', async () => {
    let late = false;
    const stubborn: ToolDefinition = {
      name: 'stubborn',
      description: 'writes late, whatever its signal says',
      parameters: z.object({}),
      readOnly: false,
      idempotent: false,
      timeoutMs: 20,
      present: () => 'stubborn',
      execute: () => new Promise((resolve) => setTimeout(() => ((late = true), resolve({ status: 'ok', content: 'wrote it' })), 400)),
    };
    const seen: ModelRequest[] = [];
    h = createHarness((req, i) => (seen.push(structuredClone(req)), i === 0 ? { toolCalls: [{ name: 'stubborn', arguments: {} }] } : { text: 'noted' }), { tools: [...builtinTools(), stubborn] });
    const out = await h.session.run('go');
    expect(out.reason).toBe('completed');
    expect(results(h)[0]).toMatchObject({ status: 'unknown', code: 'TOOL_TIMEOUT', verdict: 'uncertain' });
    expect(results(h)[0]!.content).not.toContain('was stopped');
    const told = toolText(seen[1]!)[0]!;
    expect(told).toMatch(/^\[verdict: uncertain\]/);
    expect(told).toContain('may or may not have happened');
    // And indeed it was still acting when the turn ended.
    expect(late).toBe(false);
  });

  it('a command whose process group was killed and reaped may say it was stopped (not uncertain)', async () => {
    h = createHarness((_req, i) => (i === 0 ? { toolCalls: [{ name: 'bash', arguments: { command: 'sleep 30', timeout_ms: 200 } }] } : { text: 'ok' }));
    await h.session.run('go');
    const r = results(h)[0]!;
    expect(r).toMatchObject({ status: 'error', code: 'TOOL_TIMEOUT' });
    expect(r.verdict).toBeUndefined();
    expect(r.content).toContain('was killed');
  });
});
