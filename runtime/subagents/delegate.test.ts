/**
 * Delegation through the `subagents` seam, as whole sessions: the parent and
 * every child are real sessions of the same product (memory logs, one
 * function model that tells them apart by the task each was given). Each
 * exercise of the course's chapter 7 is a test named after its "done when".
 */
import fs from 'node:fs';
import path from 'node:path';
import { crashyProvider } from '../../test/sweep/delegation.js';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemorySessionStore, type MemorySessionStore } from '../../adapters/store/memory.js';
import type { ScriptedResponse } from '../../adapters/model/scripted-script.js';
import { deriveMessages } from '../../log/derive-messages.js';
import type { Entry, EntryOf } from '../../log/entries.js';
import type { ModelRequest } from '../../log/messages.js';
import { verifyLog } from '../../log/verify.js';
import type { ModelProvider } from '../../ports/model.js';
import { SANDBOX, SESSION, SUBAGENTS } from '../../ports/index.js';
import type { SubagentProvider } from '../../ports/subagents.js';
import type { Plugin } from '../../plugins/host.js';
import { replayThroughMachines } from '../../replay/replay.js';
import { toolsOfLog } from '../../replay/setup.js';
import { builtinTools } from '../../tools/index.js';
import { createHarness, type Harness, type HarnessOptions } from '../../test/helpers/harness.js';
import { renderCompletedTurns } from '../../log/completed-turns.js';

let h: Harness | undefined;
afterEach(() => h?.cleanup());

/** Who a request comes from: the text of its first user message (a child's is its task). */
const whoOf = (req: ModelRequest): string => {
  const first = req.messages.find((m) => m.role === 'user');
  return first && first.role === 'user' ? first.content : '';
};
const lastUser = (req: ModelRequest) => {
  const m = [...req.messages].reverse().find((x) => x.role === 'user');
  return m && m.role === 'user' ? m.content : '';
};
const toolResults = (req: ModelRequest) => req.messages.flatMap((m) => (m.role === 'tool' ? [m.content] : []));

type Respond = (who: string, req: ModelRequest, n: number) => ScriptedResponse | undefined | Promise<ScriptedResponse | undefined>;

/** A parent and its children answered by `respond`, each session told apart by its task; every log kept by id. */
function tree(respond: Respond, over: HarnessOptions = {}) {
  const sessions = createMemorySessionStore();
  const counts = new Map<string, number>();
  const seen: { who: string; req: ModelRequest }[] = [];
  h = createHarness(
    async (req) => {
      const who = whoOf(req);
      const n = counts.get(who) ?? 0;
      counts.set(who, n + 1);
      seen.push({ who, req });
      return respond(who, req, n);
    },
    { ...over, settings: { maxDepth: 3, ...over.settings }, services: { store: sessions, ...over.services } },
  );
  const log = (id: string): Entry[] => (sessions.get(id)?.text() ?? '').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Entry);
  return { sessions, log, seen };
}

const delegate = (task: string, extra: Record<string, unknown> = {}): ScriptedResponse => ({ toolCalls: [{ name: 'delegate', arguments: { task, ...extra } }] });
const resultsOf = (log: readonly Entry[], name = 'delegate') => log.filter((e): e is EntryOf<'tool/result'> => e.kind === 'tool/result' && e.name === name);
const kinds = (log: readonly Entry[], prefix: string) => log.filter((e) => e.kind.startsWith(prefix)).map((e) => e.kind);
const C1 = 'test-session.t1.s1.c1';

describe('subagents: the chapter 7 exercises', () => {
  it('the same call site works unmodified against spawn and mock-remote, selected only by name', async () => {
    const reports: string[] = [];
    for (const provider of ['spawn', 'mock-remote']) {
      const t = tree((who, _req, n) => {
        if (who === 'count the files') return n === 0 ? { toolCalls: [{ name: 'list_dir', arguments: {} }] } : { text: 'two files' };
        return n === 0 ? delegate('count the files', { provider }) : { text: 'done' };
      }, { patch: [{ insert: true, id: 'subagent:mock-remote', use: 'mock-remote' }] });
      fs.writeFileSync(path.join(h!.workspace, 'a.txt'), 'a');
      fs.writeFileSync(path.join(h!.workspace, 'b.txt'), 'b');
      const out = await h!.session.run('go');
      expect(out.reason).toBe('completed');
      const parent = h!.entries();
      expect(parent.find((e) => e.kind === 'subagent/start')).toMatchObject({ callId: 't1.s1.c1', child: C1, depth: 1, mode: provider });
      const [r] = resultsOf(parent);
      expect(r).toMatchObject({ status: 'ok' });
      reports.push(r!.content.replace(/log: \S+\)/, 'log: …)'));
      const child = t.log(C1);
      expect(child[0]).toMatchObject({ kind: 'session/start', depth: 1, parent: 'test-session' });
      expect(resultsOf(child, 'list_dir')).toMatchObject([{ status: 'ok' }]);
      expect(verifyLog(parent).violations).toEqual([]);
      expect(verifyLog(child).violations).toEqual([]);
      h!.cleanup();
      h = undefined;
    }
    // What the parent's model reads is the same, whichever provider ran the child.
    expect(reports[0]).toBe(reports[1]);
    expect(reports[0]).toContain('two files');
  });

  it('a child-of-child-of-child delegation is refused with a clear error (DEPTH_LIMIT, before a child exists); depths 1–3 run', async () => {
    const t = tree((who, req, n) => {
      const level = /^level (\d)$/.exec(who)?.[1];
      const next = level === undefined ? 1 : Number(level) + 1;
      if (n === 0) return delegate(`level ${next}`);
      return { text: `level ${level ?? 0} heard: ${toolResults(req).at(-1)?.split('\n')[0]}` };
    }, { approval: 'never' });
    const out = await h!.session.run('go deep');
    expect(out.reason).toBe('completed');
    const ids = [C1, `${C1}.${'t1.s1.c1'}`, `${C1}.t1.s1.c1.t1.s1.c1`];
    ids.forEach((id, i) => expect(t.log(id)[0]).toMatchObject({ kind: 'session/start', depth: i + 1 }));
    // The fourth level: refused by name, and no log, no bracket, nothing created.
    const third = t.log(ids[2]!);
    const [refused] = resultsOf(third);
    expect(refused).toMatchObject({ status: 'error', code: 'DEPTH_LIMIT' });
    expect(refused!.content).toMatch(/^Not delegated \(DEPTH_LIMIT\): delegation depth 4 is over the limit of 3 \(--max-depth\)/);
    expect(third.some((e) => e.kind === 'subagent/start')).toBe(false);
    expect(t.sessions.get(`${ids[2]}.t1.s1.c1`)).toBeUndefined();
    // Depth 2 and 3 ran although each child runs under approval never: delegating is not a write.
    for (const id of ids.slice(0, 2)) expect(resultsOf(t.log(id))).toMatchObject([{ status: 'ok' }]);
    for (const log of [h!.entries(), ...ids.map(t.log)]) expect(verifyLog(log).violations).toEqual([]);
  });

  it('forking mid-tool-call never hands the child a dangling tool call: it sees completed turns only', async () => {
    const t = tree((who, req, n) => {
      if (who === 'summarize') return { text: 'forked report' };
      if (lastUser(req) === 'second question' && n === 1) return { toolCalls: [{ name: 'list_dir', arguments: {} }, { name: 'delegate', arguments: { task: 'summarize', provider: 'fork' } }] };
      return { text: lastUser(req) === 'second question' ? 'second done' : 'first answer' };
    });
    await h!.session.run('first question');
    await h!.session.run('second question');
    const child = t.seen.find((s) => s.who !== 'first question' && s.who !== 'summarize' && s.req.messages.length > 0 && JSON.stringify(s.req.messages).includes('summarize'));
    const req = child?.req ?? t.seen.find((s) => JSON.stringify(s.req.messages).includes('had these completed turns'))!.req;
    const text = JSON.stringify(req.messages);
    expect(text).toContain('first question');
    expect(text).toContain('first answer');
    // The running turn — its question and its half-finished step with the delegate call — is not there.
    expect(text).not.toContain('second question');
    expect(text).not.toMatch(/CALL (list_dir|delegate)/);
    const calls = req.messages.flatMap((m) => (m.role === 'assistant' ? (m.toolCalls ?? []).map((c) => c.id) : []));
    const answered = new Set(req.messages.flatMap((m) => (m.role === 'tool' ? [m.toolCallId] : [])));
    expect(calls.filter((c) => !answered.has(c))).toEqual([]);
    expect(renderCompletedTurns([])).toBe('');
    expect(t.log('test-session.t2.s1.c2')[0]).toMatchObject({ kind: 'session/start', depth: 1 });
  });

  it('a denied child action fails immediately, never hanging: every child runs under approval never, whatever the parent\'s', async () => {
    let asked = 0;
    const t = tree(
      (who, _req, n) => {
        // Both need more than the confinement gives (a .git write; a command with the sandbox off), so `never` refuses them (ADR 0052).
        if (who === 'write a file') return n === 0 ? { toolCalls: [{ name: 'write_file', arguments: { path: '.git/x.txt', content: 'no' } }, { name: 'bash', arguments: { command: 'touch y' } }] } : { text: 'I was not allowed' };
        return n === 0 ? delegate('write a file') : { text: 'ok' };
      },
      // The parent asks a person who never answers; the child must never reach them.
      { approval: 'ask', answerer: () => ((asked++, new Promise(() => undefined))) },
    );
    const out = await h!.session.run('go');
    expect(out.reason).toBe('completed');
    expect(asked).toBe(0);
    const child = t.log(C1);
    expect(resultsOf(child, 'write_file')).toMatchObject([{ status: 'denied' }]);
    expect(resultsOf(child, 'bash')).toMatchObject([{ status: 'denied' }]);
    expect(resultsOf(child, 'write_file')[0]!.content).toContain('approval policy "never"');
    expect(child.some((e) => e.kind === 'approval/asked')).toBe(false);
    expect(fs.existsSync(path.join(h!.workspace, '.git', 'x.txt'))).toBe(false);
    expect(fs.existsSync(path.join(h!.workspace, 'y'))).toBe(false);
  });

  it('the registry rejects an unsupported delegation request (advertised depthLimit, toolFilter, unknown provider) before the provider ever creates a child', async () => {
    let opened = 0;
    const spy: Plugin = {
      name: 'spy-provider',
      inject: [SUBAGENTS],
      apply: (ctx) =>
        void ctx.effect(() =>
          ctx.get(SUBAGENTS).register({ name: 'spy', advertised: { maxDepth: 1, tools: ['read_file', 'list_dir'] }, open: async () => ((opened++, Promise.reject(new Error('never asked')))) } satisfies SubagentProvider, 'spy'),
        ),
    };
    const t = tree((who, _req, n) => {
      if (who === 'deeper') return n === 0 ? delegate('too deep for it', { provider: 'mock-remote' }) : { text: 'child done' };
      if (n === 0) {
        return {
          toolCalls: [
            { name: 'delegate', arguments: { task: 'run a command', provider: 'spy', tools: ['bash'] } },
            { name: 'delegate', arguments: { task: 'x', provider: 'nope' } },
            { name: 'delegate', arguments: { task: 'deeper' } },
          ],
        };
      }
      return { text: 'parent done' };
    }, { plugins: [spy], patch: [{ insert: true, id: 'subagent:mock-remote', use: 'mock-remote', config: { maxDepth: 1, tools: ['read_file', 'list_dir'] } }] });
    await h!.session.run('go');
    const [filter, unknown] = resultsOf(h!.entries());
    expect(filter).toMatchObject({ code: 'TOOL_FILTER_UNSUPPORTED' });
    expect(filter!.content).toContain('provider spy cannot offer bash (it offers: read_file, list_dir)');
    expect(unknown).toMatchObject({ code: 'SUBAGENT_PROVIDER_UNKNOWN' });
    expect(unknown!.content).toMatch(/no subagent provider named "nope" \(this session has: spawn, fork, mock-remote, spy\)/);
    const [deep] = resultsOf(t.log('test-session.t1.s1.c3'));
    expect(deep).toMatchObject({ code: 'DEPTH_LIMIT' });
    expect(deep!.content).toContain('delegation depth 2 is deeper than provider mock-remote can go (1)');
    expect(t.sessions.get('test-session.t1.s1.c3.t1.s1.c1')).toBeUndefined();
    expect(opened).toBe(0);
    expect(h!.entries().filter((e) => e.kind === 'subagent/start').map((e) => (e as EntryOf<'subagent/start'>).child)).toEqual(['test-session.t1.s1.c3']);
    expect(t.sessions.get('test-session.t1.s1.c1')).toBeUndefined();
  });
});

describe('subagents: parallel delegation, budgets, cancel, crashes, filters', () => {
  it('two delegate calls in one answer run concurrently, and their results reach the parent in call order (I2)', async () => {
    let arrived = 0;
    let release: () => void = () => undefined;
    const both = new Promise<void>((r) => (release = r));
    const t = tree(async (who, req, n) => {
      if (who === 'task A' || who === 'task B') {
        if (n === 0) {
          // Each child waits until both have made a request: one run after the other would never get here.
          if (++arrived === 2) release();
          const met = await Promise.race([both.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 5_000))]);
          return { text: `${who}: ${met ? 'ran alongside the other' : 'ran alone'}` };
        }
      }
      if (n === 0) return { toolCalls: [{ name: 'delegate', arguments: { task: 'task A' } }, { name: 'delegate', arguments: { task: 'task B' } }] };
      return { text: toolResults(req).map((r) => r.split('\n')[0]).join(' | ') };
    });
    const out = await h!.session.run('go');
    expect(out.reason).toBe('completed');
    const results = resultsOf(h!.entries());
    expect(results.map((r) => r.content.split('\n')[0]).sort()).toEqual(['task A: ran alongside the other', 'task B: ran alongside the other']);
    // The model reads them in call order, whichever finished first.
    const last = t.seen.at(-1)!.req;
    const tools = last.messages.filter((m) => m.role === 'tool');
    expect(tools.map((m) => (m as { toolCallId: string }).toolCallId)).toEqual(['call_0_0', 'call_0_1']);
    expect(deriveMessages(h!.entries()).filter((m) => m.role === 'tool').map((m) => m.content.split('\n')[0])).toEqual(['task A: ran alongside the other', 'task B: ran alongside the other']);
    // Both children were running at once: each one's first step began before the other's turn ended.
    const a = t.log('test-session.t1.s1.c1');
    const b = t.log('test-session.t1.s1.c2');
    const at = (log: Entry[], kind: string) => Date.parse(log.find((e) => e.kind === kind)!.at);
    expect(at(a, 'step/start')).toBeLessThan(at(b, 'turn/end'));
    expect(at(b, 'step/start')).toBeLessThan(at(a, 'turn/end'));
    expect(verifyLog(h!.entries()).violations).toEqual([]);
  });

  it('a tree budget ends the children with a named reason (TREE_BUDGET_EXHAUSTED), the parent sees it, and no new child is admitted', async () => {
    const t = tree(
      (who, _req, n) => {
        if (who === 'loop forever') return { toolCalls: [{ name: 'list_dir', arguments: { path: `.${'/.'.repeat(n)}` } }] };
        if (n === 0) return delegate('loop forever');
        if (n === 1) return delegate('one more');
        return { text: 'parent done' };
      },
      { settings: { maxDepth: 2, treeBudget: { steps: 3 } }, repeatCall: false },
    );
    const out = await h!.session.run('go');
    expect(out.reason).toBe('completed');
    const [spent, refused] = resultsOf(h!.entries());
    expect(spent).toMatchObject({ status: 'error', code: 'TREE_BUDGET_EXHAUSTED' });
    expect(spent!.content).toContain("the delegation tree's budget (--tree-budget) is spent");
    expect(h!.entries().find((e) => e.kind === 'subagent/end')).toMatchObject({ reason: 'aborted', code: 'TREE_BUDGET_EXHAUSTED' });
    expect(refused).toMatchObject({ code: 'TREE_BUDGET_EXHAUSTED' });
    expect(refused!.content).toMatch(/^Not delegated \(TREE_BUDGET_EXHAUSTED\): the delegation tree's budget is spent \(steps 3\/3 used\)/);
    const child = t.log(C1);
    expect(child.filter((e) => e.kind === 'step/start')).toHaveLength(3);
    expect(child.findLast((e) => e.kind === 'turn/end')).toMatchObject({ kind: 'turn/end', reason: 'aborted' });
    expect(verifyLog(child).violations).toEqual([]);
  });

  it("the parent's cancel reaches the child: its turn ends aborted in its own log, the parent's bracket closes at the cancel, and the parent log replays byte for byte", async () => {
    let childStarted: () => void = () => undefined;
    const started = new Promise<void>((r) => (childStarted = r));
    const hanging: ModelProvider = {
      id: 'hanging',
      async *stream(req, signal) {
        if (whoOf(req) === 'wait for me') {
          childStarted();
          await new Promise((r) => signal.addEventListener('abort', r, { once: true }));
          yield { type: 'finish', finish: { kind: 'aborted' } };
          return;
        }
        yield { type: 'block-start', index: 0, block: { type: 'tool-call', id: 'call_0_0', name: 'delegate' } };
        yield { type: 'tool-call-delta', index: 0, argumentsDelta: JSON.stringify({ task: 'wait for me' }) };
        yield { type: 'block-end', index: 0 };
        yield { type: 'finish', finish: { kind: 'ok', reason: 'tool-calls' } };
      },
    };
    const sessions = createMemorySessionStore();
    h = createHarness(hanging, { settings: { maxDepth: 1 }, services: { store: sessions } });
    const run = h.session.run('go');
    await started;
    await h.session.cancel('user');
    const out = await run;
    expect(out.reason).toBe('aborted');
    await h.session.close();
    const parent = h.entries();
    const i = parent.findIndex((e) => e.kind === 'tool/result');
    expect(parent[i]).toMatchObject({ status: 'aborted', code: 'ABORTED' });
    expect(parent[i + 1]).toMatchObject({ kind: 'subagent/end', child: C1, reason: 'aborted', code: 'ABORTED' });
    const child = sessions.get(C1)!.text().trim().split('\n').map((l) => JSON.parse(l) as Entry);
    expect(child.findLast((e) => e.kind === 'turn/end')).toMatchObject({ kind: 'turn/end', reason: 'aborted' });
    expect(verifyLog(parent).violations).toEqual([]);
    expect(verifyLog(child).violations).toEqual([]);
    const replayed = await replayThroughMachines(parent, toolsOfLog(parent, builtinTools()));
    expect(replayed.note).toBeUndefined();
    expect(replayed.identical).toBe(true);
  });

  it('a child crash is a failed result with a named code (SUBAGENT_CRASHED), never a hang; the parent carries on', async () => {
    const crashy = crashyProvider('the child process died (SIGKILL)');
    tree((_who, req, n) => (n === 0 ? delegate('anything', { provider: 'crashy' }) : { text: `parent read: ${toolResults(req)[0]}` }), { plugins: [crashy] });
    const out = await h!.session.run('go');
    expect(out.reason).toBe('completed');
    const [r] = resultsOf(h!.entries());
    expect(r).toMatchObject({ status: 'error', code: 'SUBAGENT_CRASHED' });
    expect(r!.content).toContain('the child crashed: the child process died (SIGKILL)');
    expect(kinds(h!.entries(), 'subagent/')).toEqual(['subagent/start', 'subagent/end']);
    expect(h!.entries().find((e) => e.kind === 'subagent/end')).toMatchObject({ reason: 'error', code: 'SUBAGENT_CRASHED' });
    expect(verifyLog(h!.entries()).violations).toEqual([]);
  });

  it("the parent's sandbox policy is snapshotted when the child is made: the child keeps it whatever happens to the parent's", async () => {
    const seen: { depth: number; policy: { mode: string; network: boolean } }[] = [];
    const spy: Plugin = { name: 'sandbox-spy', inject: [SANDBOX, SESSION], apply: (ctx) => void seen.push({ depth: ctx.get(SESSION).depth, policy: ctx.get(SANDBOX).policy as { mode: string; network: boolean } }) };
    tree((who, _req, n) => (who === 'look' ? { text: 'looked' } : n === 0 ? delegate('look') : { text: 'ok' }), { plugins: [spy] });
    const parent = seen.find((x) => x.depth === 0)!.policy;
    await h!.session.run('go');
    const child = seen.find((x) => x.depth === 1)!.policy;
    expect(child).toEqual(parent);
    expect(child).not.toBe(parent);
    // Were the parent's policy to change after the spawn, the child's would not.
    const was = child.mode;
    parent.mode = parent.mode === 'read-only' ? 'workspace-write' : 'read-only';
    expect(child.mode).toBe(was);
  });

  it('a tool filter narrows what the child sees, by intersection', async () => {
    const t = tree((who, _req, n) => {
      if (who === 'read only') return { text: 'fine' };
      return n === 0 ? delegate('read only', { tools: ['read_file', 'grep'] }) : { text: 'ok' };
    });
    await h!.session.run('go');
    const child = t.seen.find((s) => s.who === 'read only')!.req;
    expect(child.tools.map((x) => x.name)).toEqual(['read_file', 'grep']);
    expect(child.system).not.toMatch(/\bbash\b/);
    expect(t.log(C1).some((e) => e.kind === 'request/header')).toBe(true);
  });
});
