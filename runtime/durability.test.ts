/**
 * Durability at the session level: two-phase dispatch, save before notify,
 * cancellation through one signal, the wake latch, and resume from a crashed
 * log (repair, restore from the newest checkpoint, continue).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createMemoryStore, type MemoryStore } from '../adapters/store/memory.js';
import type { Entry, EntryOf } from '../log/entries.js';
import { planRepair } from '../log/repair.js';
import { verifyLog } from '../log/verify.js';
import { checkCheckpoints, durableView, foldSession, restoreSessionSnapshot } from '../machines/session-fold.js';
import { createHarness, type Harness } from '../test/helpers/harness.js';
import { builtinTools } from '../tools/index.js';
import type { ToolDefinition, ToolOutput } from '../ports/tools.js';

let h: Harness | undefined;
afterEach(() => {
  h?.session.actor.stop();
  h?.cleanup();
  h = undefined;
});

const tick = () => new Promise((r) => setTimeout(r, 5));
async function until(cond: () => boolean, ms = 2000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await tick();
  }
}

/** A tool that writes (so calls run one at a time) and runs `body`. */
function probe(name: string, body: (signal: AbortSignal) => Promise<ToolOutput>, idempotent = false): ToolDefinition {
  return { name, description: name, parameters: z.strictObject({}), readOnly: false, idempotent, present: () => name, execute: (_a, ctx) => body(ctx.signal) };
}
const blockUntilAborted = (signal: AbortSignal) => new Promise<ToolOutput>((r) => signal.addEventListener('abort', () => r({ status: 'error', code: 'ABORTED', content: 'aborted' }), { once: true }));

/** A memory store that counts how many lines are durable, with flushes that take a little while (or wait for a gate). */
function slowStore(gate?: (lastLine: string) => Promise<void> | undefined): MemoryStore & { durable: number } {
  const inner = createMemoryStore();
  const s = Object.assign(Object.create(inner) as MemoryStore, { durable: 0 }) as MemoryStore & { durable: number };
  s.flush = async () => {
    const upTo = inner.lines.length;
    await (gate?.(inner.lines[upTo - 1] ?? '') ?? tick());
    s.durable = Math.max(s.durable, upTo);
  };
  return s;
}
const kindsOf = (entries: readonly Entry[]) => entries.map((e) => e.kind);
const ofKind = <K extends Entry['kind']>(entries: readonly Entry[], k: K) => entries.filter((e): e is EntryOf<K> => e.kind === k);

describe('durability', () => {
  it('two-phase dispatch: tool/dispatch is durable before the tool body starts, tool/result before the next request', async () => {
    const store = slowStore();
    let durableAtStart = -1;
    let lineOfDispatch = -1;
    const tool = probe('probe', async () => {
      durableAtStart = store.durable;
      lineOfDispatch = store.lines.findIndex((l) => l.includes('"tool/dispatch"')) + 1;
      return { status: 'ok', content: 'ran' };
    });
    let durableAtSecondRequest = -1;
    h = createHarness(
      (_r, i) => {
        if (i === 1) durableAtSecondRequest = store.durable;
        return i === 0 ? { toolCalls: [{ name: 'probe' }] } : { text: 'done' };
      },
      { store, tools: [tool] },
    );
    await h.session.run('go');
    expect(lineOfDispatch).toBeGreaterThan(0);
    expect(durableAtStart).toBeGreaterThanOrEqual(lineOfDispatch);
    const resultLine = store.lines.findIndex((l) => l.includes('"tool/result"')) + 1;
    expect(durableAtSecondRequest).toBeGreaterThanOrEqual(resultLine);
    expect(ofKind(h.entries(), 'tool/dispatch')[0]).toMatchObject({ name: 'probe', idempotent: false });
  });

  it('save before notify: the caller hears the turn ended only after turn/end is durable', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const store = slowStore((last) => (last.includes('"turn/end"') ? held : undefined));
    h = createHarness(() => ({ text: 'hi' }), { store });
    const durableSeen: string[] = [];
    h.session.recorder.onDurable((e) => durableSeen.push(e.kind));
    let settled = false;
    const run = h.session.run('go').then((o) => ((settled = true), o));
    await until(() => h!.entries().some((e) => e.kind === 'turn/end'));
    await tick();
    expect(settled).toBe(false);
    expect(durableSeen).not.toContain('turn/end');
    release();
    const out = await run;
    expect(out.reason).toBe('completed');
    expect(durableSeen).toContain('turn/end');
    expect(store.durable).toBeGreaterThanOrEqual(store.lines.findIndex((l) => l.includes('"turn/end"')) + 1);
  });

  it('cancel: the running call is ABORTED through its signal, the next never dispatches (I5), the turn ends aborted by the user', async () => {
    let signal: AbortSignal | undefined;
    const first = probe('first', (s) => ((signal = s), blockUntilAborted(s)));
    let secondRan = false;
    const second = probe('second', async () => ((secondRan = true), { status: 'ok', content: '' }));
    h = createHarness(() => ({ toolCalls: [{ name: 'first' }, { name: 'second' }] }), { tools: [first, second] });
    const run = h.session.run('go');
    await until(() => signal !== undefined);
    const out = await h.session.cancel('user');
    expect(out).toMatchObject({ reason: 'aborted', cause: 'user' });
    expect((await run).reason).toBe('aborted');
    expect(signal!.aborted).toBe(true);
    expect(secondRan).toBe(false);
    const results = ofKind(h.entries(), 'tool/result');
    expect(results.map((r) => [r.callId, r.status, r.code])).toEqual([
      ['t1.s1.c1', 'aborted', 'ABORTED'],
      ['t1.s1.c2', 'aborted', 'ABORTED_BEFORE_DISPATCH'],
    ]);
    expect(ofKind(h.entries(), 'tool/dispatch').map((d) => d.callId)).toEqual(['t1.s1.c1']);
    expect(ofKind(h.entries(), 'turn/end')[0]).toMatchObject({ reason: 'aborted', cause: 'user' });
    expect(verifyLog(h.entries(), { checkpoints: checkCheckpoints }).violations).toEqual([]);
  });

  it('cancel mid-stream aborts the model stream through its signal; partial text is kept as interrupted', async () => {
    let signal: AbortSignal | undefined;
    h = createHarness({
      id: 'slow',
      async *stream(_req, s) {
        signal = s;
        yield { type: 'block-start', index: 0, block: { type: 'text' } };
        yield { type: 'text-delta', index: 0, text: 'half an ans' };
        await new Promise((r) => s.addEventListener('abort', r, { once: true }));
        yield { type: 'finish', finish: { kind: 'aborted' } };
      },
    });
    const run = h.session.run('go');
    await until(() => signal !== undefined);
    await tick();
    await h.session.cancel();
    await run;
    expect(signal!.aborted).toBe(true);
    expect(ofKind(h.entries(), 'assistant/message')[0]).toMatchObject({ interrupted: true, blocks: [{ type: 'text', text: 'half an ans' }] });
    expect(verifyLog(h.entries()).violations).toEqual([]);
  });

  it('the wake latch: input arriving while a turn is torn down runs exactly once afterwards', async () => {
    let signal: AbortSignal | undefined;
    const slow = probe('slow', (s) => ((signal = s), blockUntilAborted(s)));
    h = createHarness((req) => ((req.messages.at(-1) as { content: string }).content === 'go' ? { toolCalls: [{ name: 'slow' }] } : { text: 'ok' }), { tools: [slow] });
    void h.session.run('go');
    await until(() => signal !== undefined);
    const cancelled = h.session.cancel('user');
    expect(h.session.actor.getSnapshot().value).toEqual({ running: 'cancelling' });
    h.session.send('next');
    h.session.send('next', 'followup');
    await cancelled;
    await h.session.idle();
    const inputs = ofKind(h.entries(), 'turn/start').map((t) => t.input);
    expect(inputs).toEqual(['go', 'next', 'next']);
    expect(ofKind(h.entries(), 'turn/end').map((t) => t.reason)).toEqual(['aborted', 'completed', 'completed']);
    expect(verifyLog(h.entries(), { checkpoints: checkCheckpoints }).violations).toEqual([]);
  });
});

describe('resume from a crashed log', () => {
  it('repairs, restores from the newest checkpoint plus the tail, and continues without re-running the tool', async () => {
    // The crash: turn 2 dispatches a non-idempotent tool and the process dies while it runs.
    let runs = 0;
    const sideEffect = probe('side_effect', (s) => (runs++, blockUntilAborted(s)));
    const tools = [...builtinTools(), sideEffect];
    const crashed = createHarness((_r, i) => (i === 0 ? { text: 'first turn done' } : { toolCalls: [{ name: 'side_effect' }] }), { tools });
    await crashed.session.run('one');
    void crashed.session.run('two');
    await until(() => runs === 1);
    const survived = [...crashed.entries()];
    crashed.session.actor.stop();
    crashed.cleanup();

    const plan = planRepair(survived);
    if (!plan.ok) throw new Error('not repairable');
    expect(plan.report).toMatchObject({ turn: 't2', outcomeUnknown: [{ callId: 't2.s1.c1', name: 'side_effect', idempotent: false }] });
    const store = createMemoryStore();
    const { Recorder } = await import('../log/recorder.js');
    const rec = new Recorder(store, () => Date.UTC(2026, 1, 1), survived);
    for (const d of plan.drafts) rec.append(d);
    const repaired = rec.entries.slice();
    expect(verifyLog(repaired, { checkpoints: checkCheckpoints }).violations).toEqual([]);

    const snapshot = restoreSessionSnapshot(repaired);
    expect(durableView(snapshot as never)).toEqual(durableView(foldSession(repaired)));
    expect(durableView(snapshot as never)).toMatchObject({ turns: 2, last: { turn: 't2', reason: 'interrupted' } });

    h = createHarness(() => ({ text: 'checked the state; all good' }), { tools, existing: repaired, snapshot });
    const out = await h.session.run('Carry on with the interrupted work.', 'resume');
    expect(out).toMatchObject({ turn: 't3', reason: 'completed' });
    expect(runs).toBe(1);
    const all = h.entries();
    expect(ofKind(all, 'user/message').at(-1)).toMatchObject({ turn: 't3', origin: 'resume' });
    // The model sees the unknown outcome, then the harness's note.
    const msgs = h.requests[0]!.request.messages;
    expect(msgs.at(-2)).toMatchObject({ role: 'tool', content: expect.stringMatching(/check the current state first/) });
    expect(msgs.at(-1)).toMatchObject({ role: 'user', content: expect.stringMatching(/^\[Harness note\]/) });
    expect(verifyLog(all, { checkpoints: checkCheckpoints }).violations).toEqual([]);
    expect(kindsOf(all).slice(-2)).toEqual(['turn/end', 'checkpoint']);
  });
});
