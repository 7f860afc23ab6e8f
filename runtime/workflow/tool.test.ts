/**
 * The `workflow` tool as whole sessions: a parent whose model writes a
 * script, its agents real child sessions of the same product (memory logs;
 * one function model that tells the sessions apart by their task).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createMemorySessionStore } from '../../adapters/store/memory.js';
import type { ScriptedResponse } from '../../adapters/model/scripted-script.js';
import type { Entry, EntryOf } from '../../log/entries.js';
import type { ModelRequest } from '../../log/messages.js';
import { verifyLog } from '../../log/verify.js';
import { replayThroughMachines } from '../../replay/replay.js';
import { toolsOfLog } from '../../replay/setup.js';
import { builtinTools } from '../../tools/index.js';
import { createHarness, type Harness, type HarnessOptions } from '../../test/helpers/harness.js';

let h: Harness | undefined;
afterEach(() => h?.cleanup());

const whoOf = (req: ModelRequest) => {
  const m = req.messages.find((x) => x.role === 'user');
  return m?.role === 'user' ? m.content : '';
};
const lastTool = (req: ModelRequest) => [...req.messages].reverse().find((m) => m.role === 'tool')?.content ?? '';

function session(respond: (who: string, req: ModelRequest, n: number) => ScriptedResponse | Promise<ScriptedResponse>, over: HarnessOptions = {}) {
  const sessions = createMemorySessionStore();
  const counts = new Map<string, number>();
  h = createHarness(
    async (req) => {
      const who = whoOf(req);
      const n = counts.get(who) ?? 0;
      counts.set(who, n + 1);
      return respond(who, req, n);
    },
    { ...over, settings: { maxDepth: 1, ...over.settings }, services: { store: sessions } },
  );
  const log = (id: string): Entry[] => (sessions.get(id)?.text() ?? '').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Entry);
  return { sessions, log };
}
const workflow = (script: string): ScriptedResponse => ({ toolCalls: [{ name: 'workflow', arguments: { script } }] });
const resultOf = (log: readonly Entry[]) => log.find((e): e is EntryOf<'tool/result'> => e.kind === 'tool/result' && e.name === 'workflow')!;

const PARALLEL_PIPELINE = `
  const [a, b] = await parallel([() => agent('survey module a'), () => agent('survey module b')]);
  const fixes = await pipeline(['x', 'y'], (f) => agent('diagnose ' + f), (d) => agent('fix: ' + d));
  return { surveys: [a, b], fixes };`;

describe('the workflow tool', () => {
  it('runs a parallel + pipeline script whose agents are logged subagents of the calling session', async () => {
    const t = session((who, req, n) => {
      if (who.startsWith('survey')) return { text: `${who.slice(-1)} is fine` };
      if (who.startsWith('diagnose')) return { text: `${who.slice(-1)} needs a lock` };
      if (who.startsWith('fix:')) return { text: `fixed (${who.slice(5)})` };
      return n === 0 ? workflow(PARALLEL_PIPELINE) : { text: `all done: ${lastTool(req).length} characters of result` };
    });
    const out = await h!.session.run('orchestrate');
    expect(out.reason).toBe('completed');
    const parent = h!.entries();
    const r = resultOf(parent);
    expect(r.status).toBe('ok');
    expect(JSON.parse(r.content)).toEqual({ surveys: ['a is fine', 'b is fine'], fixes: ['fixed (x needs a lock)', 'fixed (y needs a lock)'] });
    const starts = parent.filter((e): e is EntryOf<'subagent/start'> => e.kind === 'subagent/start');
    expect(starts).toHaveLength(6);
    expect(new Set(starts.map((s) => s.callId))).toEqual(new Set(['t1.s1.c1']));
    expect(starts.map((s) => s.child).sort()).toEqual([1, 2, 3, 4, 5, 6].map((i) => `test-session.t1.s1.c1.a${i}`));
    expect(parent.filter((e) => e.kind === 'subagent/end')).toHaveLength(6);
    // Every bracket closes before the workflow's result.
    const resultAt = parent.indexOf(r);
    expect(parent.findLastIndex((e) => e.kind === 'subagent/end')).toBeLessThan(resultAt);
    for (const s of starts) {
      const child = t.log(s.child);
      expect(child[0]).toMatchObject({ kind: 'session/start', depth: 1, parent: 'test-session' });
      expect(verifyLog(child).violations).toEqual([]);
    }
    expect(verifyLog(parent).violations).toEqual([]);
    const replay = await replayThroughMachines(parent, toolsOfLog(parent, builtinTools()));
    expect(replay.note).toBeUndefined();
    expect(replay.identical).toBe(true);
  });

  it('a script returning a function fails with WORKFLOW_RESULT_NOT_SERIALIZABLE; a bad script ends the call with a named error and the session stays up', async () => {
    const scripts = ['return () => "a function";', 'return (', 'throw new Error("the script gave up")', 'while (true) {}'];
    session((_who, _req, n) => (n < scripts.length ? workflow(scripts[n]!) : { text: 'still here' }), { patch: [{ id: 'workflow', use: 'worker', config: { deadlineMs: 400 } }] });
    await h!.session.run('try them all');
    const results = h!.entries().filter((e): e is EntryOf<'tool/result'> => e.kind === 'tool/result');
    expect(results.map((r) => [r.status, r.code])).toEqual([
      ['error', 'WORKFLOW_RESULT_NOT_SERIALIZABLE'],
      ['error', 'WORKFLOW_SYNTAX_ERROR'],
      ['error', 'WORKFLOW_SCRIPT_ERROR'],
      ['error', 'WORKFLOW_DEADLINE'],
    ]);
    expect(results[0]!.content).toBe('The workflow failed (WORKFLOW_RESULT_NOT_SERIALIZABLE, fatal): the result must be plain JSON: result is a function');
    const next = await h!.session.run('and now?');
    expect(next.reason).toBe('completed');
  });

  it('a failed agent is recoverable (its slot is null); a refused one is fatal; agents left running when the script ends are cancelled before the result', async () => {
    const t = session(
      async (who, _req, n) => {
        if (who === 'fails') return { error: { code: 'AUTH', message: 'no key' } };
        if (who === 'slow') return new Promise<ScriptedResponse>((resolve) => setTimeout(() => resolve({ text: 'too late' }), 2_000));
        if (who.startsWith('ok')) return { text: 'fine' };
        if (n === 0) return workflow(`return await pipeline(['ok 1', 'fails', 'ok 2'], (t) => agent(t));`);
        if (n === 1) return workflow(`return await agent('nested', { provider: 'nope' });`);
        if (n === 2) return workflow(`agent('slow'); await new Promise((r) => setTimeout(r, 20)); throw fatal('giving up early', 'EARLY');`);
        return { text: 'done' };
      },
    );
    await h!.session.run('go');
    const results = h!.entries().filter((e): e is EntryOf<'tool/result'> => e.kind === 'tool/result');
    expect(JSON.parse(results[0]!.content)).toEqual(['fine', null, 'fine']);
    expect(results[1]).toMatchObject({ status: 'error', code: 'SUBAGENT_PROVIDER_UNKNOWN' });
    expect(results[1]!.content).toMatch(/^The workflow failed \(SUBAGENT_PROVIDER_UNKNOWN, fatal\)/);
    expect(results[2]).toMatchObject({ status: 'error', code: 'EARLY' });
    const third = h!.entries().filter((e): e is EntryOf<'subagent/end'> => e.kind === 'subagent/end' && e.callId === results[2]!.callId);
    expect(third).toMatchObject([{ reason: 'aborted', code: 'ABORTED' }]);
    expect(h!.entries().indexOf(third[0]!)).toBeLessThan(h!.entries().indexOf(results[2]!));
    await h!.session.close();
    const slow = t.log(third[0]!.child);
    expect(slow.findLast((e) => e.kind === 'turn/end')).toMatchObject({ reason: 'aborted' });
    expect(verifyLog(h!.entries()).violations).toEqual([]);
  });

  it('is offered only with --max-depth ≥ 1, like delegate', async () => {
    session(() => ({ text: 'hi' }), { settings: { maxDepth: 0 } });
    await h!.session.run('hi');
    const header = h!.entries().find((e): e is EntryOf<'request/header'> => e.kind === 'request/header')!;
    expect(header.tools.map((x) => x.name)).not.toContain('workflow');
    expect(header.tools.map((x) => x.name)).not.toContain('delegate');
  });
});
