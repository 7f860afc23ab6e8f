/**
 * The Ralph loop over real sessions (memory logs, a function model that
 * tells the rounds apart by their prompt, real tools and a real `--verify`
 * command in a temp workspace). The course's chapter 10 exercises: the
 * bounded-handoff loop, and the independent verifier.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemorySessionStore } from '../../adapters/store/memory.js';
import type { ScriptedResponse } from '../../adapters/model/scripted-script.js';
import type { Entry, EntryOf } from '../../log/entries.js';
import type { ModelRequest } from '../../log/messages.js';
import { verifyLog } from '../../log/verify.js';
import { SESSION, SUBPROCESS } from '../../ports/index.js';
import { replayThroughMachines } from '../../replay/replay.js';
import { toolsOfLog } from '../../replay/setup.js';
import { builtinTools } from '../../tools/index.js';
import { createHarness, type Harness, type HarnessOptions } from '../../test/helpers/harness.js';
import { committingStore } from '../../test/helpers/committing-store.js';
import { runRalph } from './loop.js';

let h: Harness | undefined;
afterEach(() => h?.cleanup());

const firstUser = (req: ModelRequest) => {
  const m = req.messages.find((x) => x.role === 'user');
  return m?.role === 'user' ? m.content : '';
};
const roundOf = (req: ModelRequest) => Number(/^You are round (\d+)/.exec(firstUser(req))?.[1] ?? 0);
const isVerifier = (req: ModelRequest) => firstUser(req).startsWith('You are an independent verifier');
const handoff = (status: string, summary: string, more: Record<string, unknown> = {}): ScriptedResponse => ({ toolCalls: [{ name: 'handoff', arguments: { status, summary, evidence: `evidence for: ${summary}`, ...more } }] });

interface Plan {
  objective: string;
  rounds: number;
  verify: string | null;
  verifier?: boolean;
}

/** A Ralph run's own session (a memory log among others), the model answering each session by `respond`. */
async function ralph(plan: Plan, respond: (req: ModelRequest, n: number) => ScriptedResponse, over: HarnessOptions = {}, sessions = createMemorySessionStore()) {
  const counts = new Map<string, number>();
  const requests: ModelRequest[] = [];
  h = createHarness(
    async (req) => {
      requests.push(structuredClone(req));
      const who = firstUser(req);
      const n = counts.get(who) ?? 0;
      counts.set(who, n + 1);
      return respond(req, n);
    },
    { ...over, services: { store: sessions } },
  );
  const control = h.session.host.get(SESSION);
  control.record({ kind: 'ralph/start', objective: plan.objective, rounds: plan.rounds, verify: plan.verify, verifier: plan.verifier ?? false });
  const said: string[] = [];
  const outcome = await runRalph({ session: control, subprocess: h.session.host.get(SUBPROCESS), signal: new AbortController().signal, say: (l) => said.push(l) });
  await h.session.close();
  const log = (id: string): Entry[] => (sessions.get(id)?.text() ?? '').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Entry);
  return { outcome, said, requests, log, parent: h.session.recorder.entries, sessions };
}
const ralphEntries = (es: readonly Entry[]) => es.filter((e) => e.kind.startsWith('ralph/'));

let r2Started = false;
describe("the Ralph loop: the chapter 10 exercises", () => {
  it('a Ralph-style bounded-handoff loop: a fresh child per round, only a capped JSON report carrying forward', async () => {
    const big = 'x'.repeat(5_000);
    const r = await ralph({ objective: 'count to three in notes.txt', rounds: 3, verify: 'grep -q three notes.txt' }, (req, n) => {
      const round = roundOf(req);
      if (round === 1) return n === 0 ? { toolCalls: [{ name: 'write_file', arguments: { path: 'notes.txt', content: 'one\n' } }] } : n === 1 ? handoff('continue', big) : n === 2 ? handoff('continue', 'wrote one', { nextSteps: ['write two'] }) : { text: 'round 1 over' };
      if (round === 2) return n === 0 ? { toolCalls: [{ name: 'edit_file', arguments: { path: 'notes.txt', old_text: 'one\n', new_text: 'one\ntwo\n' } }] } : n === 1 ? { text: 'I wrote two and forgot the handoff.' } : { text: '?' };
      return n === 0 ? { toolCalls: [{ name: 'edit_file', arguments: { path: 'notes.txt', old_text: 'two\n', new_text: 'two\nthree\n' } }] } : n === 1 ? handoff('complete', 'wrote three') : { text: 'done' };
    });
    expect(r.outcome).toBe('verified');
    expect(fs.readFileSync(path.join(h!.workspace, 'notes.txt'), 'utf8')).toBe('one\ntwo\nthree\n');
    // Each round began with one message, the prompt: the objective, its round and cap, the handoff; no conversation.
    const firsts = [1, 2, 3].map((k) => r.requests.find((q) => roundOf(q) === k)!);
    for (const q of firsts) expect(q.messages).toHaveLength(1);
    expect(firstUser(firsts[0]!)).toContain('You are round 1 of at most 3');
    expect(firstUser(firsts[0]!)).toContain('count to three in notes.txt');
    expect(firstUser(firsts[0]!)).toContain('Handoff: none, this is the first round.');
    expect(firstUser(firsts[1]!)).toContain('"summary": "wrote one"');
    expect(firstUser(firsts[1]!)).not.toContain('round 1 over');
    // Over the cap: an error result the child must fix, never a cut handoff.
    const r1 = r.log('test-session.r1');
    const tooBig = r1.find((e): e is EntryOf<'tool/result'> => e.kind === 'tool/result' && e.name === 'handoff')!;
    expect(tooBig).toMatchObject({ status: 'error', code: 'HANDOFF_TOO_LARGE' });
    expect(tooBig.content).toMatch(/the handoff is \d+ bytes of JSON; the cap is 4096/);
    // A round that leaves no handoff is `continue`, its last words the summary.
    const handoffs = r.parent.filter((e): e is EntryOf<'ralph/handoff'> => e.kind === 'ralph/handoff');
    expect(handoffs.map((x) => [x.round, x.source, x.handoff.status, x.handoff.summary])).toEqual([
      [1, 'tool', 'continue', 'wrote one'],
      [2, 'last-text', 'continue', 'I wrote two and forgot the handoff.'],
      [3, 'tool', 'complete', 'wrote three'],
    ]);
    expect(firstUser(firsts[2]!)).toContain('"summary": "I wrote two and forgot the handoff."');
    for (const e of handoffs) expect(Buffer.byteLength(JSON.stringify(e.handoff))).toBeLessThanOrEqual(4096);
    // The children are depth 1 under the run, each a log of its own.
    for (const k of [1, 2, 3]) expect(r.log(`test-session.r${k}`)[0]).toMatchObject({ kind: 'session/start', depth: 1, parent: 'test-session' });
  });

  it("an independent verifier checks a worker's self-declared complete against the workspace before accepting it: a false claim is rejected and the next round gets the verifier's output", async () => {
    const r = await ralph({ objective: 'make test.sh pass', rounds: 4, verify: 'bash test.sh' }, (req, n) => {
      const round = roundOf(req);
      if (round === 1) return n === 0 ? { toolCalls: [{ name: 'write_file', arguments: { path: 'test.sh', content: 'echo "1 of 2 tests FAILED: b"; exit 1\n' } }] } : n === 1 ? handoff('complete', 'all passing (I believe)') : { text: 'ok' };
      if (round === 2) return n === 0 ? { toolCalls: [{ name: 'write_file', arguments: { path: 'test.sh', content: 'echo "2 of 2 tests passed"\n' } }] } : n === 1 ? handoff('complete', 'fixed b') : { text: 'ok' };
      return { text: 'unexpected round' };
    });
    expect(r.outcome).toBe('verified');
    const verdicts = r.parent.filter((e): e is EntryOf<'ralph/verdict'> => e.kind === 'ralph/verdict');
    expect(verdicts.map((v) => [v.round, v.verified, v.exitCode])).toEqual([
      [1, false, 1],
      [2, true, 0],
    ]);
    expect(verdicts[0]!.output).toContain('1 of 2 tests FAILED: b');
    const second = firstUser(r.requests.find((q) => roundOf(q) === 2)!);
    expect(second).toContain("An independent verifier rejected round 1's claim of complete.");
    expect(second).toContain('1 of 2 tests FAILED: b');
    expect(second).toContain('"status": "continue"');
    expect(ralphEntries(r.parent).map((e) => e.kind)).toEqual(['ralph/start', 'ralph/round', 'ralph/handoff', 'ralph/verify', 'ralph/verdict', 'ralph/round', 'ralph/handoff', 'ralph/verify', 'ralph/verdict', 'ralph/end']);
    expect(r.parent.at(-1)).toMatchObject({ kind: 'ralph/end', outcome: 'verified', round: 2 });
    expect(verifyLog(r.parent).violations).toEqual([]);
    const replay = await replayThroughMachines(r.parent, toolsOfLog(r.parent, builtinTools()));
    expect(replay.identical).toBe(true);
  });

  it('a verifier agent reads the workspace with read-only tools and must cite what it read; an uncited verdict does not count', async () => {
    const r = await ralph({ objective: 'STATUS must say done', rounds: 3, verify: null, verifier: true }, (req, n) => {
      if (isVerifier(req)) {
        const second = r2Started;
        if (!second) return n === 0 ? { toolCalls: [{ name: 'verdict', arguments: { verified: true, evidence: 'looks done to me', citations: ['STATUS'] } }] } : { text: 'ok' };
        return n === 0 ? { toolCalls: [{ name: 'read_file', arguments: { path: 'STATUS' } }] } : n === 1 ? { toolCalls: [{ name: 'verdict', arguments: { verified: true, evidence: 'STATUS says done', citations: ['STATUS'] } }] } : { text: 'ok' };
      }
      const round = roundOf(req);
      if (round === 2) r2Started = true;
      if (n === 0) return { toolCalls: [{ name: 'write_file', arguments: { path: 'STATUS', content: 'done\n' } }, { name: 'write_file', arguments: { path: 'x', content: `${round}` } }] };
      return n === 1 ? handoff('complete', `round ${round}: STATUS written`) : { text: 'ok' };
    });
    expect(r.outcome).toBe('verified');
    const verdicts = r.parent.filter((e): e is EntryOf<'ralph/verdict'> => e.kind === 'ralph/verdict');
    expect(verdicts.map((v) => [v.round, v.verified, v.code])).toEqual([
      [1, false, 'UNCITED'],
      [2, true, undefined],
    ]);
    const agent = r.log('test-session.r2.verifier');
    expect(agent[0]).toMatchObject({ depth: 1, parent: 'test-session' });
    const header = agent.find((e): e is EntryOf<'request/header'> => e.kind === 'request/header')!;
    expect(header.tools.map((t) => t.name).sort()).toEqual(['glob', 'grep', 'list_dir', 'read_file', 'verdict']);
  });

  it("on a store that commits at a flush, the entry naming a round or a verifier is committed before any of that child's turn is (ADR 0103)", async () => {
    const s = committingStore();
    const r = await ralph(
      { objective: 'STATUS must say done', rounds: 2, verify: null, verifier: true },
      (req, n) => {
        if (isVerifier(req)) return n === 0 ? { toolCalls: [{ name: 'read_file', arguments: { path: 'STATUS' } }] } : n === 1 ? { toolCalls: [{ name: 'verdict', arguments: { verified: true, evidence: 'STATUS says done', citations: ['STATUS'] } }] } : { text: 'ok' };
        return n === 0 ? { toolCalls: [{ name: 'write_file', arguments: { path: 'STATUS', content: 'done\n' } }] } : n === 1 ? handoff('complete', 'STATUS written') : { text: 'ok' };
      },
      {},
      s.store as ReturnType<typeof createMemorySessionStore>,
    );
    expect(r.outcome).toBe('verified');
    // Both children committed a turn: the check had something to check.
    for (const id of ['test-session.r1', 'test-session.r1.verifier']) expect(s.durable.get(id)?.some((e) => e.kind === 'turn/end'), id).toBe(true);
    expect(s.broken).toEqual([]);
  });

  it('ends blocked with the blocker, or when the rounds run out', async () => {
    const blocked = await ralph({ objective: 'x', rounds: 3, verify: 'true' }, (req, n) => (roundOf(req) === 2 && n === 0 ? handoff('blocked', 'no network', { blockerText: 'the registry is unreachable' }) : n === 0 ? handoff('continue', 'tried') : { text: 'ok' }));
    expect(blocked.outcome).toBe('blocked');
    expect(blocked.parent.at(-1)).toMatchObject({ kind: 'ralph/end', outcome: 'blocked', round: 2, blockerText: 'the registry is unreachable' });
    h!.cleanup();
    const out = await ralph({ objective: 'x', rounds: 2, verify: 'false' }, (_req, n) => (n === 0 ? handoff('complete', 'surely') : { text: 'ok' }));
    expect(out.outcome).toBe('exhausted');
    expect(out.parent.filter((e) => e.kind === 'ralph/verdict').map((e) => (e as EntryOf<'ralph/verdict'>).verified)).toEqual([false, false]);
  });

  it('a Ralph verifier that only listed a directory cannot cite a file in it; one whose grep showed a line of it can', async () => {
    let attempt = 0;
    const r = await ralph({ objective: 'STATUS must say done', rounds: 2, verify: null, verifier: true }, (req, n) => {
      if (isVerifier(req)) {
        if (n === 0) attempt++;
        const look = attempt === 1 ? { name: 'list_dir', arguments: {} } : { name: 'grep', arguments: { pattern: 'done' } };
        return n === 0 ? { toolCalls: [look] } : n === 1 ? { toolCalls: [{ name: 'verdict', arguments: { verified: true, evidence: 'STATUS says done', citations: ['STATUS'] } }] } : { text: 'ok' };
      }
      return n === 0 ? { toolCalls: [{ name: 'write_file', arguments: { path: 'STATUS', content: 'done\n' } }] } : n === 1 ? handoff('complete', 'STATUS written') : { text: 'ok' };
    });
    // The listing named STATUS; it never showed what STATUS says.
    expect(r.log('test-session.r1.verifier').find((e) => e.kind === 'tool/result' && e.name === 'list_dir')).toMatchObject({ status: 'ok', content: expect.stringContaining('STATUS') });
    const verdicts = r.parent.filter((e): e is EntryOf<'ralph/verdict'> => e.kind === 'ralph/verdict');
    expect(verdicts.map((v) => [v.round, v.verified, v.code])).toEqual([
      [1, false, 'UNCITED'],
      [2, true, undefined],
    ]);
    expect(r.outcome).toBe('verified');
  });

  it('a Ralph round is a child under never like every other: its write runs and nobody is asked, even when the run is on ask; a command the sandbox would not confine is refused by name', async () => {
    const asked: string[] = [];
    const r = await ralph({ objective: 'write notes', rounds: 1, verify: 'grep -q noted notes.txt' }, (_req, n) =>
      n === 0 ? { toolCalls: [{ name: 'write_file', arguments: { path: 'notes.txt', content: 'noted\n' } }, { name: 'bash', arguments: { command: 'touch ran.txt' } }] } : n === 1 ? handoff('complete', 'noted') : { text: 'ok' },
      { approval: 'ask', answerer: async (q) => (asked.push(q.name), { outcome: 'allowed-once', by: 'test' }) },
    );
    expect(r.outcome).toBe('verified');
    expect(asked).toEqual([]);
    const round = r.log('test-session.r1');
    expect(round[0]).toMatchObject({ kind: 'session/start', policy: { approval: 'never' } });
    expect(round.some((e) => e.kind === 'approval/asked')).toBe(false);
    const results = round.filter((e): e is EntryOf<'tool/result'> => e.kind === 'tool/result');
    expect(results.map((x) => [x.name, x.status]).sort()).toEqual([['bash', 'denied'], ['handoff', 'ok'], ['write_file', 'ok']]);
    expect(results.find((x) => x.name === 'bash')!.content).toContain('SANDBOX_OFF');
    expect(fs.existsSync(path.join(h!.workspace, 'ran.txt'))).toBe(false);
  });
});
