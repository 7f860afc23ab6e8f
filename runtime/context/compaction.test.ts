/**
 * Compaction in a running session (I9): it never deletes, its brackets are
 * log-only, the model sees ordinary logged replacements (I1 holds for every
 * request, summary requests included), an orphan is detected and repaired,
 * and input that arrives meanwhile is never lost.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ScriptedResponse } from '../../adapters/model/scripted-script.js';
import { createMemoryStore } from '../../adapters/store/memory.js';
import { findOrphanCompaction } from '../../log/context/orphan.js';
import { isSummaryInstruction } from '../../log/context/summary-prompt.js';
import { pairingProblems } from '../../log/context/testing.js';
import { estimateRequestTokens } from '../../log/context/tokens.js';
import { deriveMessages } from '../../log/derive-messages.js';
import type { Entry, EntryOf } from '../../log/entries.js';
import type { ModelRequest } from '../../log/messages.js';
import { parseLog } from '../../log/parse.js';
import { planRepair } from '../../log/repair.js';
import { verifyLog } from '../../log/verify.js';
import { checkModelVisibleIsLogged, createHarness, type Harness } from '../../test/helpers/harness.js';

let h: Harness | undefined;
afterEach(() => h?.cleanup());

const SUMMARY = ['## Request and intent', 'Read the files.', '## Key facts', 'none', '## Files touched', 'f.txt', '## Errors and fixes', 'none', '## Current work', 'reading', '## Next step', 'read on'].join('\n');
const lastUser = (r: ModelRequest) => r.messages.at(-1);
const only = <K extends Entry['kind']>(h: Harness, kind: K) => h.entries().filter((e): e is EntryOf<K> => e.kind === kind);

/** A model that reads `file` for `steps` steps, then answers; summary requests get SUMMARY. */
function worker(steps: number, file = 'f.txt') {
  let step = 0;
  return (req: ModelRequest): ScriptedResponse => {
    if (isSummaryInstruction(lastUser(req))) return { text: SUMMARY };
    step++;
    return step <= steps ? { toolCalls: [{ name: 'read_file', arguments: { path: file } }] } : { text: 'All read.' };
  };
}

/** Every entry of `before` is still in `after`, byte for byte: nothing was deleted or rewritten. */
const keepsEverything = (before: readonly Entry[], after: readonly Entry[]) =>
  before.every((e, i) => JSON.stringify(e) === JSON.stringify(after[i]));

describe('compaction in a session (I9)', () => {
  it('proactive: never deletes, brackets are log-only, I1 holds for every request, the raw log replays to the same projection', async () => {
    const snapshots: { at: number; messages: string }[] = [];
    h = createHarness(worker(60), { contextWindow: 6000 });
    fs.writeFileSync(path.join(h.workspace, 'f.txt'), 'line of text\n'.repeat(40));
    const copies: Entry[][] = [];
    h.session.recorder.onEntry((e) => {
      if (e.kind === 'compaction/start') copies.push(structuredClone([...h!.session.recorder.entries]));
      if (e.kind === 'compaction/end') snapshots.push({ at: e.seq, messages: JSON.stringify(h!.session.recorder.projection.messages) });
    });
    const out = await h.session.run('read f.txt again and again');
    expect(out.reason).toBe('completed');

    const all = h.entries();
    const starts = only(h, 'compaction/start');
    const ends = only(h, 'compaction/end');
    expect(starts.length).toBeGreaterThanOrEqual(2);
    expect(ends).toHaveLength(starts.length);
    expect(ends.every((e) => e.outcome === 'compacted')).toBe(true);
    expect(starts.every((s) => s.trigger === 'proactive' && s.window === 6000)).toBe(true);
    // Never deletes: every earlier state of the log is a prefix of the final one.
    for (const c of copies) expect(keepsEverything(c, all)).toBe(true);
    // Every request stays inside the window; I1 holds, summary requests included.
    for (const r of h.requests) expect(estimateRequestTokens(r.request)).toBeLessThanOrEqual(6000);
    expect(checkModelVisibleIsLogged(h)).toEqual([]);
    // One prompt-cache key for all of them, summary requests too: they share the session's prefix.
    expect(new Set(h.requests.map((r) => r.request.cacheKey))).toEqual(new Set(['test-session']));
    // Brackets are log-only: dropping them changes nothing the model sees, and no request mentions them.
    expect(deriveMessages(all.filter((e) => !e.kind.startsWith('compaction/')))).toEqual(deriveMessages(all));
    for (const r of h.requests) expect(JSON.stringify(r.request.messages)).not.toMatch(/compaction\/(start|summary|end)/);
    // The summary reaches the model as an ordinary logged replacement, marked as a summary.
    const final = h.requests.at(-1)!.request.messages;
    expect(final[0]).toEqual({ role: 'user', content: 'read f.txt again and again' });
    expect((final[1] as { content: string }).content).toMatch(/^\[Summary of earlier work in this session, written by the harness\]\n## Request and intent/);
    expect(pairingProblems(final)).toEqual([]);
    // Replaying the raw log (the JSONL text) reproduces the projection exactly, after every compaction.
    const parsed = parseLog(h.store.text()).entries;
    for (const s of snapshots) expect(JSON.stringify(deriveMessages(parsed.filter((e) => e.seq <= s.at)))).toBe(s.messages);
    expect(deriveMessages(parsed)).toEqual(h.session.recorder.projection.messages);
    expect(verifyLog(parsed).violations).toEqual([]);
  });

  it("the summary request replays the previous request's system prompt, tools and messages byte for byte, then asks", async () => {
    h = createHarness(worker(40), { contextWindow: 6000 });
    fs.writeFileSync(path.join(h.workspace, 'f.txt'), 'line of text\n'.repeat(40));
    await h.session.run('go');
    const k = h.requests.findIndex((r) => isSummaryInstruction(lastUser(r.request)));
    expect(k).toBeGreaterThan(0);
    const summary = h.requests[k]!.request;
    const previous = h.requests[k - 1]!.request;
    expect(summary.system).toBe(previous.system);
    expect(JSON.stringify(summary.tools)).toBe(JSON.stringify(previous.tools));
    expect(JSON.stringify(summary.messages.slice(0, previous.messages.length))).toBe(JSON.stringify(previous.messages));
    const ask = (lastUser(summary) as { content: string }).content;
    for (const section of ['Request and intent', 'Key facts', 'Files touched', 'Errors and fixes', 'Current work', 'Next step']) expect(ask).toContain(`## ${section}`);
  });

  it('prunes an oversized tool result first: a logged replacement with the same call ids, head and tail kept', async () => {
    h = createHarness(worker(3, 'big.txt'), { contextWindow: 8000 });
    fs.writeFileSync(path.join(h.workspace, 'big.txt'), Array.from({ length: 3000 }, (_, i) => `row ${i}`).join('\n'));
    const out = await h.session.run('read big.txt');
    expect(out.reason).toBe('completed');
    const replaced = only(h, 'tool/result').filter((r) => r.surfaceOp !== 'append');
    expect(replaced.length).toBeGreaterThan(0);
    for (const r of replaced) {
      const original = h.entries().find((e) => e.seq === (r.surfaceOp as { start: number }).start) as EntryOf<'tool/result'>;
      expect(original.kind).toBe('tool/result');
      expect([r.callId, r.toolCallId, r.name]).toEqual([original.callId, original.toolCallId, original.name]);
      expect(r.content).toMatch(/bridle cut \d+ characters \(\d+ lines\)/);
      expect(r.content.length).toBeLessThan(original.content.length);
      expect(r.content.slice(0, 40)).toBe(original.content.slice(0, 40));
    }
    for (const r of h.requests) expect(estimateRequestTokens(r.request)).toBeLessThanOrEqual(8000);
    expect(checkModelVisibleIsLogged(h)).toEqual([]);
    expect(verifyLog(h.entries()).violations).toEqual([]);
  });

  it('reactive: an overflowed request compacts and is retried once, only because the history shrank', async () => {
    // The provider's window is smaller than the one configured: only the overflow tells.
    const real = 3000;
    let steps = 0;
    h = createHarness(
      (req) => {
        if (isSummaryInstruction(lastUser(req))) return { text: SUMMARY };
        if (estimateRequestTokens(req) > real) return { error: { code: 'CONTEXT_WINDOW_EXCEEDED', message: 'too long' } };
        return ++steps <= 30 ? { toolCalls: [{ name: 'read_file', arguments: { path: 'f.txt' } }] } : { text: 'done' };
      },
      { contextWindow: 100_000 },
    );
    fs.writeFileSync(path.join(h.workspace, 'f.txt'), 'line of text\n'.repeat(40));
    const out = await h.session.run('go');
    expect(out.reason).toBe('completed');
    const starts = only(h, 'compaction/start');
    expect(starts[0]!.trigger).toBe('reactive');
    // Each overflow is followed by a reactive compaction before the next step; the overflow taught the meter the
    // real window, so later compactions come early (proactive) instead.
    const kinds = h.entries().map((e) => (e.kind === 'assistant/message' && e.finish.kind === 'error' ? 'overflow' : e.kind === 'compaction/start' ? `compaction:${e.trigger}` : e.kind));
    const flow = kinds.filter((k) => k === 'overflow' || k.startsWith('compaction:') || k === 'step/start');
    flow.forEach((k, i) => k === 'overflow' && expect(flow.slice(i + 1, i + 3)).toEqual(['compaction:reactive', 'step/start']));
    expect(flow.filter((k) => k === 'compaction:proactive').length).toBeGreaterThan(0);
    for (const e of only(h, 'compaction/end')) expect(e.tokensAfter).toBeLessThan(e.tokensBefore);
    expect(checkModelVisibleIsLogged(h)).toEqual([]);
    expect(verifyLog(h.entries()).violations).toEqual([]);
  });

  it('reactive: when compaction cannot shrink the history the turn ends CONTEXT_WINDOW_EXCEEDED, after one retry at most', async () => {
    h = createHarness(() => ({ error: { code: 'CONTEXT_WINDOW_EXCEEDED', message: 'too long' } }), { contextWindow: 100_000 });
    const out = await h.session.run('a short question');
    expect(out).toMatchObject({ reason: 'error', code: 'CONTEXT_WINDOW_EXCEEDED' });
    expect(only(h, 'compaction/end').map((e) => e.outcome)).toEqual(['nothing-to-do']);
    expect(h.requests).toHaveLength(1);
  });

  it('a crash between compaction/start and compaction/end leaves a detectable orphan that repair closes', async () => {
    let hang!: () => void;
    const hanging = new Promise<void>((r) => (hang = r));
    const w = worker(40);
    h = createHarness(
      async (req) => {
        if (isSummaryInstruction(lastUser(req))) {
          hang();
          await new Promise(() => {});
        }
        return w(req);
      },
      { contextWindow: 6000 },
    );
    fs.writeFileSync(path.join(h.workspace, 'f.txt'), 'line of text\n'.repeat(40));
    void h.session.run('go');
    await hanging;
    // The process dies here: what the store holds is what survives.
    const survived = parseLog(h.store.text()).entries;
    const orphan = findOrphanCompaction(survived);
    expect(orphan).toBeDefined();
    expect(verifyLog(survived).violations.map((v) => v.violation)).toContain('unmatched-compaction');
    const plan = planRepair(survived);
    expect(plan.ok).toBe(true);
    if (!plan.ok) return;
    expect(plan.report.compaction).toBe(true);
    const store = createMemoryStore();
    const { Recorder } = await import('../../log/recorder.js');
    const rec = new Recorder(store, () => Date.UTC(2026, 1, 1), survived);
    for (const d of plan.drafts) rec.append(d);
    expect(findOrphanCompaction(rec.entries)).toBeUndefined();
    expect(keepsEverything(survived, rec.entries)).toBe(true);
    expect(verifyLog(rec.entries).violations).toEqual([]);
  });

  it('a crash during a manual compaction between turns: loading the log closes the orphan (appending only)', async () => {
    let hang!: () => void;
    const hanging = new Promise<void>((r) => (hang = r));
    h = createHarness(
      async (req) => {
        if (isSummaryInstruction(lastUser(req))) {
          hang();
          await new Promise(() => {});
        }
        return lastUser(req)?.role === 'user' ? { toolCalls: [{ name: 'read_file', arguments: { path: 'f.txt' } }] } : { text: 'read it' };
      },
      { contextWindow: 100_000 },
    );
    fs.writeFileSync(path.join(h.workspace, 'f.txt'), 'line of text\n'.repeat(80));
    await h.session.run('one');
    await h.session.run('two');
    void h.session.compact();
    await hanging;
    const survived = parseLog(h.store.text()).entries;
    expect(findOrphanCompaction(survived)).toBeDefined();
    const again = createHarness(() => ({ text: 'ok' }), { existing: survived, store: createMemoryStore() });
    try {
      const entries = again.entries();
      expect(keepsEverything(survived, entries)).toBe(true);
      // The new process says it goes on with the log (ADR 0021), then closes what loading found open.
      expect(entries.slice(survived.length).map((e) => e.kind)).toEqual(['session/reopen', 'repair', 'compaction/end']);
      expect(findOrphanCompaction(entries)).toBeUndefined();
      expect(verifyLog(entries).violations).toEqual([]);
    } finally {
      again.cleanup();
    }
  });

  it('input that arrives during compaction is queued and never lost; a cancel closes the bracket as interrupted', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let entered!: () => void;
    const inSummary = new Promise<void>((r) => (entered = r));
    const w = worker(40);
    let seen: ModelRequest[] = [];
    h = createHarness(
      async (req) => {
        seen.push(req);
        if (isSummaryInstruction(lastUser(req))) {
          entered();
          await gate;
        }
        if (lastUser(req)?.role === 'user' && (lastUser(req) as { content: string }).content === 'and then this') return { text: 'followup done' };
        return w(req);
      },
      { contextWindow: 6000 },
    );
    fs.writeFileSync(path.join(h.workspace, 'f.txt'), 'line of text\n'.repeat(40));
    const first = h.session.run('go');
    await inSummary;
    h.session.send('also mind the tabs', 'steer');
    h.session.send('and then this', 'followup');
    release();
    await first;
    await h.session.idle();
    const users = only(h, 'user/message').map((u) => [u.origin, u.text]);
    expect(users).toContainEqual(['steer', 'also mind the tabs']);
    // Logged as the compaction hands over to the step, before that step starts, not a step later.
    const kinds = h.entries().map((e) => e.kind);
    const end = kinds.indexOf('compaction/end');
    expect(kinds.slice(end + 1, end + 3)).toEqual(['user/message', 'step/start']);
    expect(h.entries()[end + 1]).toMatchObject({ origin: 'steer', text: 'also mind the tabs' });
    expect(only(h, 'turn/start').map((t) => t.input)).toEqual(['go', 'and then this']);
    // The steer reached the model in the turn it was sent to.
    expect(seen.some((r) => r.messages.some((m) => m.role === 'user' && m.content === 'also mind the tabs'))).toBe(true);

    // A cancel while summarizing: the bracket closes as interrupted and the turn ends aborted.
    h.cleanup();
    let inside!: () => void;
    const summarizing = new Promise<void>((r) => (inside = r));
    const w2 = worker(40);
    seen = [];
    h = createHarness(
      async (req) => {
        if (isSummaryInstruction(lastUser(req))) {
          inside();
          await new Promise(() => {});
        }
        return w2(req);
      },
      { contextWindow: 6000 },
    );
    fs.writeFileSync(path.join(h.workspace, 'f.txt'), 'line of text\n'.repeat(40));
    const running = h.session.run('go');
    await summarizing;
    await h.session.cancel('user');
    expect(await running).toMatchObject({ reason: 'aborted' });
    expect(only(h, 'compaction/end').at(-1)!.outcome).toBe('interrupted');
    expect(findOrphanCompaction(h.entries())).toBeUndefined();
  });

  it('session.compact(): a manual compaction between turns; a followup sent meanwhile runs afterwards', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    h = createHarness(
      async (req) => {
        if (isSummaryInstruction(lastUser(req))) {
          await gate;
          return { text: SUMMARY };
        }
        const last = lastUser(req);
        return last?.role === 'user' ? { toolCalls: [{ name: 'read_file', arguments: { path: 'f.txt' } }] } : { text: 'read it' };
      },
      { contextWindow: 100_000 },
    );
    fs.writeFileSync(path.join(h.workspace, 'f.txt'), 'line of text\n'.repeat(40));
    await h.session.run('one');
    await h.session.run('two');
    const compacted = h.session.compact();
    h.session.send('three');
    release();
    const out = await compacted;
    expect(out).toMatchObject({ outcome: 'compacted', shrank: true });
    await h.session.idle();
    expect(only(h, 'turn/start').map((t) => t.input)).toEqual(['one', 'two', 'three']);
    const kinds = h.entries().map((e) => e.kind);
    const start = kinds.indexOf('compaction/start');
    expect(kinds.slice(start - 3, start)).toEqual(['turn/end', 'checkpoint', 'session/compact']);
    expect(only(h, 'compaction/start')[0]).toMatchObject({ trigger: 'manual' });
    expect(only(h, 'compaction/start')[0]!.turn).toBeUndefined();
    expect(checkModelVisibleIsLogged(h)).toEqual([]);
    expect(verifyLog(h.entries()).violations).toEqual([]);
  });
});
