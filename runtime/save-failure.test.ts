/**
 * Save before notify, when the save fails (docs/design.md §3, ADR 0017): a flush that
 * fails at any durability point — tool/dispatch, tool/result, turn/end, a
 * compaction's end, the directory entry of a new log — ends the turn `error`
 * with `LOG_NOT_DURABLE` naming the store's error; the log says so in a
 * `log/not-durable` note, still verifies and replays byte for byte; a tool
 * effect that happened stays reported as having happened; the caller never
 * hears "completed", and the session stays up.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ScriptedResponse } from '../adapters/model/scripted-script.js';
import { createJsonlStore, type JsonlFs } from '../adapters/store/jsonl.js';
import { createMemoryStore, type MemoryStore } from '../adapters/store/memory.js';
import { isSummaryInstruction } from '../log/context/summary-prompt.js';
import type { Entry, EntryOf } from '../log/entries.js';
import { LogNotDurableError } from '../log/errors.js';
import type { ModelRequest } from '../log/messages.js';
import { parseLog } from '../log/parse.js';
import { verifyLog } from '../log/verify.js';
import { checkCheckpoints, durableView, foldSession } from '../machines/session-fold.js';
import { replayThroughMachines } from '../replay/replay.js';
import { createHarness, type Harness } from '../test/helpers/harness.js';
import { builtinTools } from '../tools/index.js';
import { noopReadOnceTool } from '../bench/noop-tool.js';
import type { ToolDefinition } from '../ports/tools.js';
import { tempDir } from '../test/helpers/temp.js';

let h: Harness | undefined;
afterEach(() => {
  h?.session.actor.stop();
  h?.cleanup();
  h = undefined;
});

const eio = () => Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' });

/** A memory store whose flush fails when `fails` picks the last line written (once, unless `times` says more). */
function failingFlush(fails: (lastLine: string) => boolean, times = 1): MemoryStore & { flushes: number } {
  const inner = createMemoryStore();
  let left = times;
  const s = { ...inner, flushes: 0 } as MemoryStore & { flushes: number };
  s.flush = async () => {
    s.flushes++;
    if (left > 0 && fails(inner.lines.at(-1) ?? '')) {
      left--;
      throw eio();
    }
  };
  return s;
}
const lastIs = (kind: string) => (line: string) => line.includes(`"kind":"${kind}"`);
const ofKind = <K extends Entry['kind']>(es: readonly Entry[], k: K) => es.filter((e): e is EntryOf<K> => e.kind === k);

async function expectReplays(entries: readonly Entry[], extra: readonly ToolDefinition[] = []): Promise<void> {
  expect(verifyLog(entries, { checkpoints: checkCheckpoints }).violations).toEqual([]);
  const r = await replayThroughMachines(entries, [...builtinTools(), ...extra]);
  if (!r.identical) {
    const i = r.firstDifference! - 1;
    expect({ line: i + 1, note: r.note, replayed: r.text.split('\n')[i] }).toEqual({ line: i + 1, note: r.note, replayed: r.original.split('\n')[i] });
  }
  expect(r.identical).toBe(true);
}

const writeThenDone = (_r: ModelRequest, i: number): ScriptedResponse =>
  i === 0 ? { toolCalls: [{ name: 'write_file', arguments: { path: 'out.txt', content: 'effect\n' } }] } : { text: 'all done: completed' };

describe('a flush that fails ends the turn error LOG_NOT_DURABLE', () => {
  it('at turn/end: run resolves error LOG_NOT_DURABLE naming the OS error, durable listeners never see the end, the log notes it', async () => {
    const store = failingFlush(lastIs('turn/end'));
    h = createHarness(() => ({ text: 'hi' }), { store });
    const durable: string[] = [];
    h.session.recorder.onDurable((e) => durable.push(e.kind));
    const out = await h.session.run('go');
    expect(out).toMatchObject({ turn: 't1', reason: 'error', code: 'LOG_NOT_DURABLE' });
    expect(out.cause).toContain('EIO');
    expect(durable).not.toContain('turn/end');
    const es = h.entries();
    const end = ofKind(es, 'turn/end')[0]!;
    // The turn/end already written stays as it is (nothing is rewritten); the note after it says its save failed,
    // and the checkpoint after that agrees with a fold of the log: the turn ended LOG_NOT_DURABLE.
    const at = es.indexOf(end);
    expect(es[at + 1]).toMatchObject({ kind: 'log/not-durable', upTo: end.seq, sysCode: 'EIO', detail: expect.stringContaining('EIO') });
    expect(es[at + 2]).toMatchObject({ kind: 'checkpoint', snapshot: { context: { last: { reason: 'error', code: 'LOG_NOT_DURABLE' } } } });
    expect(durableView(foldSession(es)).last).toMatchObject({ reason: 'error', code: 'LOG_NOT_DURABLE', cause: out.cause });
    await expectReplays(es);
    // The session stays up: the next turn runs (this store fails once).
    expect(await h.session.run('again')).toMatchObject({ turn: 't2', reason: 'completed' });
    await expectReplays(h.entries());
  });

  it('at tool/result: the effect stays and is reported as having happened; the model is not asked again', async () => {
    const store = failingFlush(lastIs('tool/result'));
    h = createHarness(writeThenDone, { store });
    const out = await h.session.run('write it');
    expect(out).toMatchObject({ reason: 'error', code: 'LOG_NOT_DURABLE', steps: 1 });
    expect(out.cause).toContain('EIO');
    expect(fs.readFileSync(path.join(h.workspace, 'out.txt'), 'utf8')).toBe('effect\n');
    expect(h.requests).toHaveLength(1);
    const es = h.entries();
    expect(ofKind(es, 'tool/result')).toEqual([expect.objectContaining({ status: 'ok', callId: 't1.s1.c1' })]);
    const result = ofKind(es, 'tool/result')[0]!;
    expect(es[es.indexOf(result) + 1]).toMatchObject({ kind: 'log/not-durable', upTo: result.seq });
    expect(ofKind(es, 'step/end')).toEqual([expect.objectContaining({ reason: 'error' })]);
    expect(ofKind(es, 'turn/end')).toEqual([expect.objectContaining({ reason: 'error', code: 'LOG_NOT_DURABLE', cause: expect.stringContaining('EIO') })]);
    await expectReplays(es);
  });

  it('at tool/dispatch: the tool does not run (DISPATCH_NOT_DURABLE) and the turn ends LOG_NOT_DURABLE', async () => {
    const store = failingFlush(lastIs('tool/dispatch'));
    h = createHarness(writeThenDone, { store });
    const out = await h.session.run('write it');
    expect(out).toMatchObject({ reason: 'error', code: 'LOG_NOT_DURABLE' });
    expect(fs.existsSync(path.join(h.workspace, 'out.txt'))).toBe(false);
    expect(h.requests).toHaveLength(1);
    const es = h.entries();
    expect(ofKind(es, 'tool/result')).toEqual([expect.objectContaining({ code: 'DISPATCH_NOT_DURABLE' })]);
    await expectReplays(es);
  });

  it('at every flush (a store that stays broken): the turn still ends LOG_NOT_DURABLE, the log verifies, the session takes the next input', async () => {
    const store = failingFlush(() => true, Infinity);
    h = createHarness(writeThenDone, { store });
    expect(await h.session.run('write it')).toMatchObject({ reason: 'error', code: 'LOG_NOT_DURABLE' });
    expect(fs.existsSync(path.join(h.workspace, 'out.txt'))).toBe(false);
    expect(verifyLog(h.entries()).violations).toEqual([]);
    expect(await h.session.run('again')).toMatchObject({ turn: 't2', reason: 'error', code: 'LOG_NOT_DURABLE' });
    await expectReplays(h.entries());
  });

  it('two read-only calls that may not run twice, released together, whose shared dispatch flush fails: neither runs, both say so, the log replays', async () => {
    const store = failingFlush(lastIs('tool/dispatch'), Infinity);
    let ran = 0;
    const tool = { ...noopReadOnceTool, execute: async () => (ran++, { status: 'ok' as const, content: 'ok' }) };
    h = createHarness(
      (_r, i) => (i === 0 ? { toolCalls: [{ name: tool.name, arguments: { n: 1 } }, { name: tool.name, arguments: { n: 2 } }] } : { text: 'done' }),
      { store, tools: [...builtinTools(), tool] },
    );
    expect(await h.session.run('look')).toMatchObject({ reason: 'error', code: 'LOG_NOT_DURABLE' });
    const es = h.entries();
    expect(ofKind(es, 'tool/result').map((r) => r.code)).toEqual(['DISPATCH_NOT_DURABLE', 'DISPATCH_NOT_DURABLE']);
    expect(ran).toBe(0);
    expect(h.requests).toHaveLength(1);
    await expectReplays(es, [tool]);
  });

  it('read-only, idempotent calls ride the next flush (ADR 0072): when it is the turn end and it fails, the turn ends LOG_NOT_DURABLE, the log replays', async () => {
    const store = failingFlush(lastIs('turn/end'), Infinity);
    h = createHarness(
      (_r, i) => (i === 0 ? { toolCalls: [{ name: 'list_dir', arguments: { path: '.' } }, { name: 'read_file', arguments: { path: 'a.txt' } }] } : { text: 'done' }),
      { store },
    );
    fs.writeFileSync(path.join(h.workspace, 'a.txt'), 'a\n');
    expect(await h.session.run('look')).toMatchObject({ reason: 'error', code: 'LOG_NOT_DURABLE' });
    const es = h.entries();
    expect(ofKind(es, 'tool/result').map((r) => r.status)).toEqual(['ok', 'ok']);
    expect(ofKind(es, 'log/not-durable')).toHaveLength(1);
    await expectReplays(es);
  });

  it("at a compaction's end inside a turn: the turn ends LOG_NOT_DURABLE before the next request", async () => {
    const SUMMARY = '## Request and intent\nread\n## Current work\nreading';
    let steps = 0;
    const store = failingFlush(lastIs('compaction/end'));
    h = createHarness(
      (req: ModelRequest): ScriptedResponse => {
        if (isSummaryInstruction(req.messages.at(-1))) return { text: SUMMARY };
        return ++steps <= 40 ? { toolCalls: [{ name: 'read_file', arguments: { path: 'f.txt' } }] } : { text: 'read' };
      },
      { store, contextWindow: 6000 },
    );
    fs.writeFileSync(path.join(h.workspace, 'f.txt'), 'line of text\n'.repeat(40));
    const out = await h.session.run('read f.txt again and again');
    expect(out).toMatchObject({ reason: 'error', code: 'LOG_NOT_DURABLE' });
    const es = h.entries();
    const end = ofKind(es, 'compaction/end')[0]!;
    expect(es[es.indexOf(end) + 1]).toMatchObject({ kind: 'log/not-durable', upTo: end.seq });
    // No model request after the compaction whose end could not be saved.
    expect(es.slice(es.indexOf(end)).some((e) => e.kind === 'step/start')).toBe(false);
    await expectReplays(es);
  });

  it('at a manual compaction between turns: compact() resolves saying its end was not saved', async () => {
    const store = failingFlush(lastIs('compaction/end'));
    h = createHarness(() => ({ text: 'hello there, a few words to summarize' }), { store });
    await h.session.run('one');
    const out = await h.session.compact();
    expect(out?.unsaved).toContain('EIO');
    expect(h.entries().at(-1)).toMatchObject({ kind: 'log/not-durable' });
    expect(verifyLog(h.entries()).violations).toEqual([]);
  });

  it("closing a session whose last flush fails rejects with LogNotDurableError (LOG_NOT_DURABLE) and still closes the store", async () => {
    const store = failingFlush(lastIs('checkpoint'));
    let closed = false;
    const inner = store.close;
    store.close = async () => ((closed = true), inner());
    h = createHarness(() => ({ text: 'hi' }), { store });
    expect(await h.session.run('go')).toMatchObject({ reason: 'completed' });
    const err = await h.session.close().then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(LogNotDurableError);
    expect(err).toMatchObject({ code: 'LOG_NOT_DURABLE', sysCode: 'EIO' });
    expect(closed).toBe(true);
  });
});

describe('the JSONL store at a durability point', () => {
  function dirsFailFs(): JsonlFs {
    return { ...fs, fsync: (_fd: number, done: (err: NodeJS.ErrnoException | null) => void) => done(eio()) } as unknown as JsonlFs;
  }

  it("a new log whose directory entry cannot be made durable: the first durability point fails, LOG_NOT_DURABLE", async () => {
    const home = fs.realpathSync(tempDir('bridle-dirfail-'));
    try {
      const log = path.join(home, 'sessions', 's.jsonl');
      h = createHarness(() => ({ text: 'hi' }), { store: createJsonlStore(log, { fs: dirsFailFs() }) });
      const out = await h.session.run('go');
      expect(out).toMatchObject({ reason: 'error', code: 'LOG_NOT_DURABLE' });
      await h.session.close().catch(() => undefined);
      // What reached the file is a log that verifies, the note included.
      const read = parseLog(fs.readFileSync(log, 'utf8')).entries;
      expect(read.find((e) => e.kind === 'log/not-durable')).toMatchObject({ sysCode: 'EIO' });
      expect(verifyLog(read, { checkpoints: checkCheckpoints }).violations).toEqual([]);
    } finally {
      fs.rmSync(home, { recursive: true, force: true });
    }
  });
});

describe('an append that fails after the tool ran', () => {
  it("keeps the tool's own outcome in the closing, marked uncertain, instead of calling it unknown", async () => {
    const inner = createMemoryStore();
    let once = true;
    const store: MemoryStore = {
      ...inner,
      append: (e, line) => {
        if (e.kind === 'tool/result' && once) {
          once = false;
          throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
        }
        inner.append(e, line);
      },
    };
    h = createHarness(writeThenDone, { store });
    const out = await h.session.run('write it');
    expect(out).toMatchObject({ reason: 'error', code: 'LOG_APPEND_FAILED' });
    expect(fs.readFileSync(path.join(h.workspace, 'out.txt'), 'utf8')).toBe('effect\n');
    const results = ofKind(h.entries(), 'tool/result');
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ status: 'ok', verdict: 'uncertain', callId: 't1.s1.c1' });
    expect(results[0]!.code).toBeUndefined();
    await expectReplays(h.entries());
  });
});
