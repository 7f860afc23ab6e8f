/**
 * Inputs are entries (ADR 0021), at the library's surface: `send` logs the
 * input and resolves only once it is durable; whatever takes an input names
 * it; a session that goes on from a log is handed what it left queued, once.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createScriptedProviderFromFunction } from '../adapters/model/scripted.js';
import { createMemoryStore } from '../adapters/store/memory.js';
import type { Entry, EntryOf } from '../log/entries.js';
import { LogNotDurableError } from '../log/errors.js';
import { pendingInputs } from '../log/inputs.js';
import { verifyLog } from '../log/verify.js';
import { createHarness, steppingClock, type Harness } from '../test/helpers/harness.js';
import { createSession } from './session.js';
import { SessionClosedError } from './bridle-session.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.session.close().catch(() => undefined);
  h?.cleanup();
  h = undefined;
});

const inputs = (es: readonly Entry[]) => es.filter((e): e is EntryOf<'session/input'> => e.kind === 'session/input');

describe('inputs are entries (ADR 0021)', () => {
  it('send logs the input before the session admits it, and resolves with its seq only once the store has flushed', async () => {
    let release!: () => void;
    const inner = createMemoryStore();
    let held = false;
    // The first flush (the input's) waits for the test; the rest go through.
    const slow = { ...inner, flush: () => (held ? Promise.resolve() : ((held = true), new Promise<void>((r) => (release = r)))) };
    h = createHarness(() => ({ text: 'ok' }), { store: slow });
    let acked: number | undefined;
    const sent = h.session.send('hello').then((seq) => (acked = seq));
    // Logged and admitted in the same tick: the turn names it already.
    const input = inputs(h.entries())[0]!;
    expect(input).toMatchObject({ kind: 'session/input', mode: 'followup', text: 'hello', origin: 'user' });
    expect(h.entries().find((e) => e.kind === 'turn/start')).toMatchObject({ from: input.seq });
    await new Promise((r) => setTimeout(r, 10));
    expect(acked).toBeUndefined();
    release();
    await sent;
    expect(acked).toBe(input.seq);
  });

  it('a save that fails is said: send rejects with LOG_NOT_DURABLE, and the log notes which input it was', async () => {
    const inner = createMemoryStore();
    let fail = true;
    const store = {
      ...inner,
      flush: async () => {
        if (fail) throw Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' });
      },
    };
    h = createHarness(() => ({ text: 'ok' }), { store });
    const err = await h.session.send('will it keep?').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LogNotDurableError);
    const input = inputs(h.entries())[0]!;
    expect(h.entries().find((e) => e.kind === 'log/not-durable')).toMatchObject({ input: input.seq, sysCode: 'EIO' });
    fail = false;
    await h.session.idle();
  });

  it('steer and inject taken mid-turn name their inputs; a followup queued behind the turn names its own', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let n = 0;
    h = createHarness(async () => (n++ === 0 ? (await gate, { text: 'looking', toolCalls: [{ name: 'list_dir', arguments: { path: '.' } }] }) : { text: 'done' }));
    const first = h.session.run('look around');
    await new Promise((r) => setTimeout(r, 5));
    const steer = await h.session.send('also check the tests', 'steer');
    const inject = await h.session.send('the CI is red', 'inject');
    const next = await h.session.send('then tidy up');
    release();
    await first;
    await h.session.idle();
    const es = h.entries();
    expect(es.find((e) => e.kind === 'user/message' && e.origin === 'steer')).toMatchObject({ text: 'also check the tests', from: steer });
    expect(es.find((e) => e.kind === 'user/message' && e.origin === 'inject')).toMatchObject({ text: 'the CI is red', from: inject });
    expect(es.filter((e) => e.kind === 'turn/start').map((e) => (e as EntryOf<'turn/start'>).from)).toEqual([inputs(es)[0]!.seq, next]);
    expect(pendingInputs(es)).toEqual([]);
    expect(verifyLog(es).violations).toEqual([]);
  });

  it('a session that goes on from a log is handed what it left queued, once, in log order; a second reopening finds nothing', async () => {
    h = createHarness(() => ({ text: 'ok' }));
    await h.session.run('first');
    // Queued input a process left behind: logged, taken by nothing (its end left it for a resume).
    const store = createMemoryStore();
    for (const e of h.entries()) store.append(e, JSON.stringify(e));
    const log = { ...store };
    const open = (existing: readonly Entry[]) =>
      createSession({
        id: 'test-session',
        cwd: h!.workspace,
        bridleHome: h!.bridleHome,
        settings: { approval: 'auto', sandbox: 'off' },
        services: { model: { ...createScriptedProviderFromFunction(() => ({ text: 'ok' })), name: 'scripted-test' }, store: log, clock: steppingClock(Date.UTC(2026, 0, 2)) },
        existing,
      }).start();
    const a = open(h.entries());
    await a.end('user');
    const left = [...a.recorder.entries];
    const queued = [...left];
    queued.push({ seq: queued.length + 1, at: queued.at(-1)!.at, kind: 'session/input', mode: 'followup', text: 'second', origin: 'user' });
    queued.push({ seq: queued.length + 1, at: queued.at(-1)!.at, kind: 'session/input', mode: 'inject', text: 'context for it', origin: 'system' });
    const b = open(queued);
    await b.idle();
    const es = b.recorder.entries;
    expect(es.filter((e) => e.kind === 'session/reopen')).toHaveLength(2);
    const turn = es.findLast((e): e is EntryOf<'turn/start'> => e.kind === 'turn/start')!;
    expect(turn).toMatchObject({ input: 'second', from: queued.length - 1 });
    expect(es.find((e) => e.kind === 'user/message' && e.origin === 'inject')).toMatchObject({ text: 'context for it', from: queued.length });
    expect(pendingInputs(es)).toEqual([]);
    expect(verifyLog(es).violations).toEqual([]);
    await b.close();
    const c = open(es);
    await c.idle();
    expect(c.recorder.entries.filter((e) => e.kind === 'turn/start')).toHaveLength(es.filter((e) => e.kind === 'turn/start').length);
    await c.close();
  });

  it('input to a closed session is refused by name; a cancel with nothing to cancel is not logged', async () => {
    h = createHarness(() => ({ text: 'ok' }));
    await h.session.run('hi');
    await h.session.cancel('user');
    expect(h.entries().some((e) => e.kind === 'session/cancel')).toBe(false);
    await h.session.close();
    await expect(h.session.send('anyone?')).rejects.toBeInstanceOf(SessionClosedError);
  });
});
