/**
 * I12 for the kinds of log the sweep's worlds do not write: each test runs a
 * real session through one situation — input mid-turn, a cancel mid-stream
 * or while asking, pre-step hooks, guards that deny or throw, repeat-call
 * advisories, a failed dispatch flush, a crash repaired and resumed, a second
 * Ctrl-C — then replays its log through the machines and wants it back byte
 * for byte.
 */
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createMemoryStore } from '../adapters/store/memory.js';
import { closeOpenTurnNow } from '../log/close-now.js';
import type { Chunk } from '../log/chunks.js';
import type { Entry } from '../log/entries.js';
import { parseLog } from '../log/parse.js';
import { Recorder } from '../log/recorder.js';
import { planRepair } from '../log/repair.js';
import { verifyLog } from '../log/verify.js';
import { checkCheckpoints, restoreSessionSnapshot } from '../machines/session-fold.js';
import { createHarness, steppingClock, type Harness } from '../test/helpers/harness.js';
import { builtinTools } from '../tools/index.js';
import type { ToolDefinition, ToolOutput } from '../ports/tools.js';
import type { ModelProvider } from '../ports/model.js';
import { NotReplayableError } from './errors.js';
import { replayThroughMachines } from './replay.js';
import { createSession } from '../runtime/session.js';
import type { SessionOptions } from '../runtime/session-options.js';

let h: Harness | undefined;
afterEach(() => {
  h?.cleanup();
  h = undefined;
});

const tick = () => new Promise<void>((r) => setImmediate(r));

/** A tool whose calls finish only when the test says so. */
function heldTool(): { tool: ToolDefinition; started: string[]; release: (out?: ToolOutput) => void } {
  const waiting: ((o: ToolOutput) => void)[] = [];
  const started: string[] = [];
  const tool: ToolDefinition<{ n: number }> = {
    name: 'hold',
    description: 'Waits until released.',
    parameters: z.strictObject({ n: z.int() }),
    readOnly: false,
    idempotent: false,
    execute: (args, ctx) =>
      new Promise<ToolOutput>((resolve) => {
        started.push(String(args.n));
        waiting.push(resolve);
        ctx.signal.addEventListener('abort', () => resolve({ status: 'error', code: 'ABORTED', content: 'stopped' }), { once: true });
      }),
    present: (a) => `hold ${a.n}`,
  };
  return { tool, started, release: (out = { status: 'ok', content: 'released' }) => waiting.shift()?.(out) };
}

async function expectReplays(entries: readonly Entry[], tools: readonly ToolDefinition[]): Promise<void> {
  expect(verifyLog(entries, { checkpoints: checkCheckpoints }).violations).toEqual([]);
  const r = await replayThroughMachines(entries, tools);
  if (!r.identical) {
    const i = r.firstDifference! - 1;
    expect({ line: i + 1, note: r.note, replayed: r.text.split('\n')[i] }).toEqual({ line: i + 1, note: r.note, replayed: r.original.split('\n')[i] });
  }
  expect(r.identical).toBe(true);
}

describe('replay through the machines (I12)', () => {
  it('steer and inject taken mid-turn, a followup queued for the next turn', async () => {
    const held = heldTool();
    h = createHarness((_r, i) => (i === 0 ? { toolCalls: [{ name: 'hold', arguments: { n: 1 } }] } : { text: `answer ${i}` }), { tools: [held.tool] });
    h.session.send('start');
    while (held.started.length === 0) await tick();
    h.session.send('steer this way', 'steer');
    h.session.send('context for the next step', 'inject');
    h.session.send('and then this', 'followup');
    held.release();
    await h.session.idle();
    const kinds = h.entries().map((e) => (e.kind === 'user/message' ? `${e.kind}:${e.origin}` : e.kind));
    expect(kinds.filter((k) => k.startsWith('user/message'))).toEqual(['user/message:user', 'user/message:steer', 'user/message:inject', 'user/message:user']);
    await expectReplays(h.entries(), [held.tool]);
  });

  it('a cancel mid-stream keeps the partial answer, marked interrupted; input latched during the cancel runs after', async () => {
    let calls = 0;
    const model: ModelProvider = {
      id: 'slow',
      async *stream(_req, signal): AsyncGenerator<Chunk> {
        if (calls++ > 0) return yield* oneAnswer('later answer');
        yield { type: 'block-start', index: 0, block: { type: 'text' } };
        yield { type: 'text-delta', index: 0, text: 'Half of a' };
        await new Promise<void>((r) => signal.addEventListener('abort', () => r(), { once: true }));
        yield { type: 'block-end', index: 0 };
        yield { type: 'finish', finish: { kind: 'aborted' } };
      },
    };
    let streamed = false;
    h = createHarness(model, { subscribe: (e) => void (e.type === 'chunk.streamed' && e.chunk.type === 'text-delta' && (streamed = true)) });
    h.session.send('go');
    while (!streamed) await tick();
    const cancelled = h.session.cancel('test');
    h.session.send('after the cancel', 'steer');
    h.session.send('noted', 'inject');
    await cancelled;
    await h.session.cancel('test');
    expect(h.entries().some((e) => e.kind === 'assistant/message' && e.interrupted)).toBe(true);
    await expectReplays(h.entries(), builtinTools());
  });

  it('a cancel while a call waits for approval, and one while a call runs', async () => {
    const held = heldTool();
    h = createHarness((_r, i) => (i < 2 ? { toolCalls: [{ name: 'hold', arguments: { n: i } }, { name: 'hold', arguments: { n: 9 } }] } : { text: 'done' }), {
      tools: [held.tool],
      approval: 'ask',
      answerer: () => new Promise(() => {}),
    });
    h.session.send('ask first');
    while (!h.entries().some((e) => e.kind === 'approval/asked')) await tick();
    await h.session.cancel();
    h.session.send('again');
    await tick();
    await h.session.cancel();
    expect(h.entries().filter((e) => e.kind === 'approval/decided').map((e) => (e as { outcome: string }).outcome)).toContain('cancelled');
    await expectReplays(h.entries(), [held.tool]);
  });

  it('pre-step hooks that rewrite, reject and throw; a listener that does neither (hook/report)', async () => {
    h = createHarness(() => ({ text: 'ok' }), {
      plugins: [
        {
          name: 'gate',
          apply(ctx) {
            ctx.hooks.on('pre-step', async (p, next) => {
              if (p.text === 'blocked') return { kind: 'reject', reason: 'not today' };
              if (p.text === 'explode') throw new Error('the hook broke');
              if (p.text === 'silent') return undefined;
              return next({ ...p, text: p.text.toUpperCase() });
            });
          },
        },
      ],
    });
    for (const text of ['rewrite me', 'blocked', 'explode', 'silent']) await h.session.run(text);
    const es = h.entries();
    expect(es.some((e) => e.kind === 'turn/end' && e.reason === 'blocked')).toBe(true);
    expect(es.some((e) => e.kind === 'turn/end' && e.code === 'PRE_STEP_FAILED')).toBe(true);
    expect(es.some((e) => e.kind === 'hook/report')).toBe(true);
    await expectReplays(es, builtinTools());
  });

  it('guards: the read-only sandbox denies, a throwing guard denies and is reported, repeat calls get advisories', async () => {
    h = createHarness(
      (_r, i) =>
        i === 0
          ? { toolCalls: [{ name: 'write_file', arguments: { path: 'a', content: 'x' } }, { name: 'list_dir', arguments: { path: '.' } }] }
          : i < 6
            ? { toolCalls: [{ name: 'glob', arguments: { pattern: '*.md' } }] }
            : { text: 'done' },
      {
        settings: { sandbox: 'bwrap', sandboxMode: 'read-only' },
        plugins: [
          {
            name: 'fragile',
            apply(ctx) {
              ctx.hooks.guard((call) => {
                if (call.name === 'list_dir') throw new Error('guard crashed');
              });
            },
          },
        ],
      },
    );
    await h.session.run('go');
    const es = h.entries();
    expect(es.filter((e) => e.kind === 'tool/result' && e.status === 'denied')).toHaveLength(2);
    expect(es.some((e) => e.kind === 'user/message' && e.origin === 'inject' && e.text.startsWith('[harness]'))).toBe(true);
    await expectReplays(es, builtinTools());
  });

  it('a dispatch the store could not make durable is not run (DISPATCH_NOT_DURABLE)', async () => {
    const store = createMemoryStore();
    let failNext = true;
    const flaky = { ...store, flush: async () => (failNext && store.lines.at(-1)?.includes('"tool/dispatch"') ? ((failNext = false), Promise.reject(new Error('disk full'))) : undefined) };
    // A call that is not both read-only and idempotent: only those flush their dispatch before the body (ADR 0072).
    h = createHarness((_r, i) => (i === 0 ? { toolCalls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'x' } }] } : { text: 'done' }), { store: flaky });
    await h.session.run('go');
    expect(h.entries().some((e) => e.kind === 'tool/result' && e.code === 'DISPATCH_NOT_DURABLE')).toBe(true);
    await expectReplays(h.entries(), builtinTools());
  });

  it('a crash mid-call, repaired (torn tail and open turn) and resumed with --continue', async () => {
    const held = heldTool();
    h = createHarness((_r, i) => (i === 1 ? { toolCalls: [{ name: 'hold', arguments: { n: 1 } }] } : { text: 'first done' }), { tools: [held.tool] });
    await h.session.run('first turn');
    h.session.send('second turn');
    while (held.started.length < 1) await tick();
    // The process dies here: what it logged stays, a half-written line is cut off, repair closes the rest.
    const survived = h.entries().slice();
    const plan = planRepair(survived, { torn: { line: survived.length + 1, text: '{"seq":' } });
    if (!plan.ok) throw new Error('unrepairable');
    const clock = steppingClock(Date.UTC(2026, 1, 1));
    const repaired = new Recorder(createMemoryStore(), clock, survived);
    for (const d of plan.drafts) repaired.append(d);
    const resumed = continued(h, [held.tool], { clock, existing: repaired.entries, snapshot: restoreSessionSnapshot(repaired.entries), model: { id: 'm', stream: () => oneAnswer('resumed fine') } });
    await resumed.run('This session was interrupted and has now been resumed.', 'resume');
    await resumed.close();
    const es = resumed.recorder.entries;
    expect(es.some((e) => e.kind === 'repair' && e.found === 'torn-tail')).toBe(true);
    expect(es.some((e) => e.kind === 'tool/result' && e.code === 'TOOL_OUTCOME_UNKNOWN')).toBe(true);
    await expectReplays(es, [held.tool]);
  });

  it('a second Ctrl-C closes the open turn at once; a later process continues the log', async () => {
    const held = heldTool();
    // A store whose result flushes never finish: the first Ctrl-C's cancel is still being torn down when the second comes.
    const store = createMemoryStore();
    const stuck = { ...store, flush: () => (store.lines.at(-1)?.includes('"tool/result"') ? new Promise<void>(() => {}) : Promise.resolve()) };
    h = createHarness((_r, i) => (i === 0 ? { toolCalls: [{ name: 'hold', arguments: { n: 1 } }, { name: 'hold', arguments: { n: 2 } }] } : { text: 'next' }), { tools: [held.tool], store: stuck });
    h.session.send('go');
    while (held.started.length === 0) await tick();
    void h.session.cancel();
    await tick();
    closeOpenTurnNow(h.session.recorder, { reason: 'aborted', cause: 'user' });
    const left = h.session.recorder.entries.slice();
    h.session.actor.stop();
    const later = continued(h, [held.tool], { clock: steppingClock(Date.UTC(2026, 2, 1)), existing: left, model: { id: 'm', stream: () => oneAnswer('fresh start') } });
    await later.run('again');
    await later.close();
    expect(later.recorder.entries.some((e) => e.kind === 'repair' && e.found === 'open-turn')).toBe(true);
    await expectReplays(later.recorder.entries, [held.tool]);
  });

  it('a process that stopped between a turn/end and its checkpoint; the next one continues the log', async () => {
    const store = createMemoryStore();
    h = createHarness(() => ({ text: 'one' }), { store: { ...store, flush: () => new Promise<void>(() => {}) } });
    h.session.send('first');
    while (!h.entries().some((e) => e.kind === 'turn/end')) await tick();
    h.session.actor.stop();
    const left = h.entries().slice();
    expect(left.at(-1)?.kind).toBe('turn/end');
    const later = continued(h, builtinTools(), { clock: steppingClock(Date.UTC(2026, 3, 1)), existing: left, model: { id: 'm', stream: () => oneAnswer('two') } });
    await later.run('second');
    await later.close();
    await expectReplays(later.recorder.entries, builtinTools());
  });

  it('a format 1 log (inputs not logged) is not replayable through the machines, and says why', async () => {
    h = createHarness(() => ({ text: 'hi' }));
    await h.session.run('hello');
    const old = h.entries().filter((e) => e.kind !== 'session/input').map((e) => (e.kind === 'session/start' ? { ...e, format: 1 as const } : e));
    await expect(replayThroughMachines(old, builtinTools())).rejects.toThrow(/format 1, written by an older bridle that did not log its inputs/);
  });

  it('refuses a log whose tools are not the ones it is given, naming them', async () => {
    h = createHarness(() => ({ text: 'hi' }));
    await h.session.run('hello');
    await expect(replayThroughMachines(h.entries(), builtinTools().slice(1))).rejects.toThrow(NotReplayableError);
    await expect(replayThroughMachines(h.entries(), builtinTools().slice(1))).rejects.toThrow(/differing or missing: read_file/);
  });
});

/** A later process of the harness's session: the same product, with this model, clock and log. */
function continued(h: Harness, tools: ToolDefinition[], o: { clock: () => number; model: ModelProvider; existing: readonly Entry[]; snapshot?: SessionOptions['snapshot'] }) {
  return createSession({
    id: 'test-session',
    cwd: h.workspace,
    bridleHome: h.bridleHome,
    settings: { approval: 'auto', sandbox: 'off' },
    patch: [{ id: 'subprocess', use: 'memory' }],
    services: { model: { ...o.model, name: 'scripted-test' }, store: createMemoryStore(), clock: o.clock, tools },
    sleep: async () => {},
    existing: o.existing,
    ...(o.snapshot ? { snapshot: o.snapshot } : {}),
  }).start();
}

async function* oneAnswer(text: string): AsyncGenerator<Chunk> {
  yield { type: 'block-start', index: 0, block: { type: 'text' } };
  yield { type: 'text-delta', index: 0, text };
  yield { type: 'block-end', index: 0 };
  yield { type: 'finish', finish: { kind: 'ok', reason: 'stop' } };
}
