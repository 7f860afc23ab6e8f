/**
 * A log append that fails — an entry its schema rejects, a store that
 * throws — ends the turn as data (`turn/end` error with a named code, the
 * log left valid) instead of crashing the session; a session that crashes
 * anyway refuses input with a named error instead of swallowing it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ModelProvider } from '../ports/model.js';
import { SessionCrashedError } from './session-fault.js';
import { createMemoryStore, type MemoryStore } from '../adapters/store/memory.js';
import type { Chunk } from '../log/chunks.js';
import type { Entry, EntryOf } from '../log/entries.js';
import { parseLog } from '../log/parse.js';
import { verifyLog } from '../log/verify.js';
import { checkCheckpoints } from '../machines/session-fold.js';
import { createHarness, type Harness } from '../test/helpers/harness.js';
import { builtinTools } from '../tools/index.js';
import { replayThroughMachines } from '../replay/replay.js';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import type { ToolDefinition } from '../ports/tools.js';

let h: Harness | undefined;
afterEach(() => {
  h?.cleanup();
  h = undefined;
});

/** A provider that answers each request with the next script entry's chunks (text + finish by default). */
function provider(...answers: Chunk[][]): ModelProvider {
  let i = 0;
  return {
    id: 'test',
    async *stream() {
      yield* answers[i++] ?? text('spare');
    },
  };
}
const text = (t: string, extra: Chunk[] = []): Chunk[] => [
  { type: 'block-start', index: 0, block: { type: 'text' } },
  { type: 'text-delta', index: 0, text: t },
  { type: 'block-end', index: 0 },
  ...extra,
  { type: 'finish', finish: { kind: 'ok', reason: 'stop' } },
];
const call = (name: string, args: string): Chunk[] => [
  { type: 'block-start', index: 0, block: { type: 'tool-call', id: 'c1', name } },
  { type: 'tool-call-delta', index: 0, argumentsDelta: args },
  { type: 'block-end', index: 0 },
  { type: 'finish', finish: { kind: 'ok', reason: 'tool-calls' } },
];

/** A memory store whose `append` throws for the entries `fails` picks. */
function failingStore(fails: (e: Entry) => boolean): MemoryStore {
  const inner = createMemoryStore();
  return { ...inner, append: (e, line) => (fails(e) ? (() => { throw new Error('ENOSPC: no space left on device'); })() : inner.append(e, line)) };
}

const turnEnds = (x: Harness) => x.entries().filter((e): e is EntryOf<'turn/end'> => e.kind === 'turn/end');

describe('a failed log append ends the turn, not the session', () => {
  it('an entry its schema rejects (usage 1e308 from a provider that does not clamp): turn/end error LOG_ENTRY_REJECTED, the log verifies, the next input runs', async () => {
    h = createHarness(provider(text('hi', [{ type: 'usage', usage: { inputTokens: 1, outputTokens: 1e308 } }]), text('second')));
    const out = await h.session.run('first');
    expect(out).toMatchObject({ turn: 't1', reason: 'error', code: 'LOG_ENTRY_REJECTED', steps: 1 });
    expect(out.cause).toMatch(/assistant\/message.*usage\.outputTokens/);
    expect(turnEnds(h)).toEqual([expect.objectContaining({ turn: 't1', reason: 'error', code: 'LOG_ENTRY_REJECTED', steps: 1 })]);
    expect(h.entries().find((e) => e.kind === 'repair')).toMatchObject({ found: 'turn-fault', detail: expect.stringContaining('LOG_ENTRY_REJECTED') });
    expect(verifyLog(h.entries()).violations).toEqual([]);

    expect(await h.session.run('second')).toMatchObject({ turn: 't2', reason: 'completed' });
    expect(verifyLog(h.entries(), { checkpoints: checkCheckpoints }).violations).toEqual([]);
    expect(parseLog(h.store.text()).entries).toHaveLength(h.entries().length);
    // I12: the same process went on; replay fails the same append and comes back byte for byte.
    expect((await replayThroughMachines(h.entries(), builtinTools())).identical).toBe(true);
  });

  it('a store that throws on one append (tool/dispatch of a running call): turn/end error LOG_APPEND_FAILED, the call closed as not started', async () => {
    let once = true;
    const store = failingStore((e) => e.kind === 'tool/dispatch' && once && !(once = false));
    h = createHarness(provider(call('list_dir', '{}'), text('after')), { store });
    const out = await h.session.run('list');
    expect(out).toMatchObject({ reason: 'error', code: 'LOG_APPEND_FAILED' });
    expect(out.cause).toContain('ENOSPC');
    const result = h.entries().find((e): e is EntryOf<'tool/result'> => e.kind === 'tool/result');
    expect(result).toMatchObject({ callId: 't1.s1.c1', code: 'TOOL_NOT_STARTED' });
    expect(verifyLog(h.entries()).violations).toEqual([]);
    expect(await h.session.run('again')).toMatchObject({ reason: 'completed' });
    expect((await replayThroughMachines(h.entries(), builtinTools())).identical).toBe(true);
  });

  it('a turn that crashes while a call runs stops it: its outcome is logged unknown (the finished one keeps its own), and nothing it does later reaches the log', async () => {
    let aborted = false;
    const tool = (name: string, ms: number): ToolDefinition => ({
      name,
      description: name,
      parameters: z.strictObject({}),
      readOnly: true,
      idempotent: false,
      present: () => name,
      execute: (_args, ctx) =>
        new Promise((resolve) => {
          const t = setTimeout(() => resolve({ status: 'ok', content: `${name} done` }), ms);
          ctx.signal.addEventListener('abort', () => ((aborted = true), clearTimeout(t), resolve({ status: 'error', content: 'stopped', code: 'ABORTED' })));
        }),
    });
    const both: Chunk[] = [
      { type: 'block-start', index: 0, block: { type: 'tool-call', id: 'a', name: 'slow' } },
      { type: 'block-end', index: 0 },
      { type: 'block-start', index: 1, block: { type: 'tool-call', id: 'b', name: 'fast' } },
      { type: 'block-end', index: 1 },
      { type: 'finish', finish: { kind: 'ok', reason: 'tool-calls' } },
    ];
    let once = true;
    const store = failingStore((e) => e.kind === 'tool/result' && e.name === 'fast' && once && !(once = false));
    h = createHarness(provider(both), { store, tools: [tool('slow', 300), tool('fast', 5)] });
    const out = await h.session.run('both');
    expect(out).toMatchObject({ reason: 'error', code: 'LOG_APPEND_FAILED' });
    expect(aborted).toBe(true);
    const results = h.entries().filter((e): e is EntryOf<'tool/result'> => e.kind === 'tool/result');
    // The fast call finished: its result is the one the store refused, kept as the tool gave it (ADR 0017).
    expect(results.map((r) => [r.name, r.status, r.code, r.verdict])).toEqual([
      ['slow', 'unknown', 'TOOL_OUTCOME_UNKNOWN', 'uncertain'],
      ['fast', 'ok', undefined, 'uncertain'],
    ]);
    const seen = h.entries().length;
    await new Promise((r) => setTimeout(r, 400));
    expect(h.entries().length).toBe(seen);
    expect(verifyLog(h.entries()).violations).toEqual([]);
    expect((await replayThroughMachines(h.entries(), [tool('slow', 300), tool('fast', 5)])).identical).toBe(true);
  });

  it('a call spawned just before the append that failed never starts: nothing is dispatched or logged after the turn ended', async () => {
    const calls: Chunk[] = [
      { type: 'block-start', index: 0, block: { type: 'tool-call', id: 'a', name: 'write_file' } },
      { type: 'tool-call-delta', index: 0, argumentsDelta: '{"path":"late.txt","content":"x"}' },
      { type: 'block-end', index: 0 },
      { type: 'block-start', index: 1, block: { type: 'tool-call', id: 'b', name: 'list_dir' } },
      { type: 'block-end', index: 1 },
      { type: 'finish', finish: { kind: 'ok', reason: 'tool-calls' } },
    ];
    let once = true;
    const store = failingStore((e) => e.kind === 'tool/call' && e.callId === 't1.s1.c2' && once && !(once = false));
    h = createHarness(provider(calls), { store });
    expect(await h.session.run('write')).toMatchObject({ reason: 'error', code: 'LOG_APPEND_FAILED' });
    const seen = h.entries().length;
    await new Promise((r) => setTimeout(r, 100));
    expect(h.entries().length).toBe(seen);
    expect(h.entries().some((e) => e.kind === 'tool/dispatch')).toBe(false);
    expect(existsSync(join(h.workspace, 'late.txt'))).toBe(false);
    expect(verifyLog(h.entries()).violations).toEqual([]);
    expect((await replayThroughMachines(h.entries(), builtinTools())).identical).toBe(true);
  });
});

describe('a crashed session refuses input with a named error', () => {
  it('when even closing the turn fails (the store is gone), run rejects and send throws SessionCrashedError (SESSION_CRASHED)', async () => {
    let dead = false;
    const store = failingStore((e) => dead || (e.kind === 'assistant/message' && (dead = true)));
    h = createHarness(provider(text('hi')), { store });
    const first = await h.session.run('first').then(
      (v) => ({ resolved: v }),
      (e: unknown) => ({ rejected: e }),
    );
    expect(first).toEqual({ rejected: expect.any(SessionCrashedError) });
    const err = (first as { rejected: SessionCrashedError }).rejected;
    expect(err.code).toBe('SESSION_CRASHED');
    expect(err.message).toContain('ENOSPC');
    await expect(h!.session.send('are you there?')).rejects.toThrow(SessionCrashedError);
    await expect(h.session.run('hello?')).rejects.toMatchObject({ name: 'SessionCrashedError', code: 'SESSION_CRASHED' });
    // Nothing that waits on a crashed session hangs.
    expect(await h.session.idle()).toMatchObject({ reason: 'error', code: 'SESSION_CRASHED' });
    expect(await h.session.cancel()).toMatchObject({ code: 'SESSION_CRASHED' });
    expect(await h.session.compact()).toBeUndefined();
  });
});

