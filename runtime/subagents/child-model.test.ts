/**
 * A cheaper model for exploration children, by configuration alone (course ch. 2 and 11, ADR 0066): a
 * `subagent:*` or `tool:delegate` row names the model its children run on; the parent keeps its own. The
 * child's `session/start` and the parent's `subagent/start` name the model it ran, replay gives both logs
 * back byte for byte, and the budget counts the child's spend at the child's model's price.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemorySessionStore } from '../../adapters/store/memory.js';
import { createScriptedProviderFromFunction } from '../../adapters/model/scripted.js';
import type { ScriptedResponse } from '../../adapters/model/scripted-script.js';
import { LIST_PRICES } from '../../bundles/prices.js';
import type { Entry, EntryOf } from '../../log/entries.js';
import type { ModelRequest } from '../../log/messages.js';
import { verifyLog } from '../../log/verify.js';
import { MODEL } from '../../ports/index.js';
import type { Plugin } from '../../plugins/host.js';
import { replayThroughMachines } from '../../replay/replay.js';
import { toolsOfLog } from '../../replay/setup.js';
import { builtinTools } from '../../tools/index.js';
import { sessionBudget } from './budget.js';
import { createHarness, type Harness, type HarnessOptions } from '../../test/helpers/harness.js';

let h: Harness | undefined;
afterEach(() => h?.cleanup());

const whoOf = (req: ModelRequest) => {
  const first = req.messages.find((m) => m.role === 'user');
  return first?.role === 'user' ? first.content : '';
};
const C1 = 'test-session.t1.s1.c1';
const delegate = (task: string, extra: Record<string, unknown> = {}): ScriptedResponse => ({ toolCalls: [{ name: 'delegate', arguments: { task, ...extra } }] });

/** A parent answered by `respond` (it records whom it answered); every session's log kept by id. */
function parentOf(respond: (n: number, req: ModelRequest) => ScriptedResponse, over: HarnessOptions = {}) {
  const sessions = createMemorySessionStore();
  const asked: string[] = [];
  let n = 0;
  h = createHarness(
    (req) => {
      asked.push(whoOf(req));
      return respond(n++, req);
    },
    { ...over, settings: { maxDepth: 1, ...over.settings }, services: { store: sessions, ...over.services } },
  );
  const log = (id: string): Entry[] => (sessions.get(id)?.text() ?? '').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Entry);
  return { asked, log };
}

async function replaysIdentically(log: readonly Entry[]) {
  const r = await replayThroughMachines(log, toolsOfLog(log, builtinTools()));
  expect(r.note).toBeUndefined();
  expect(r.identical).toBe(true);
}

describe('a child on a model of its own (ADR 0066)', () => {
  it('a subagent row with model: <other> runs the child on that model and the parent on its own; both logs say so and replay', async () => {
    const dir = fs.mkdtempSync(path.join(h?.workspace ?? '/tmp', 'cheap-'));
    const script = path.join(dir, 'cheap.json');
    fs.writeFileSync(script, JSON.stringify({ label: 'cheap explorer', responses: [{ text: 'the answer is in a.txt' }] }));
    const t = parentOf((n, req) => (n === 0 ? delegate('find the answer', { provider: 'explore' }) : { text: `done: ${JSON.stringify(req.messages.at(-1))}` }), {
      patch: [{ insert: true, id: 'subagent:explore', use: 'spawn', config: { model: `scripted:${script}` } }],
    });
    try {
      const out = await h!.session.run('go');
      expect(out.reason).toBe('completed');
      // The parent's model answered the parent only: the child's task reached the cheap one.
      expect(t.asked).toEqual(['go', 'go']);
      const parent = h!.entries();
      const child = t.log(C1);
      expect(child[0]).toMatchObject({ kind: 'session/start', model: `scripted:${script}`, depth: 1 });
      expect(parent[0]).toMatchObject({ kind: 'session/start', model: 'scripted-test' });
      expect(parent.find((e) => e.kind === 'subagent/start')).toMatchObject({ mode: 'explore', child: C1, model: `scripted:${script}` });
      const result = parent.find((e): e is EntryOf<'tool/result'> => e.kind === 'tool/result' && e.name === 'delegate');
      expect(result).toMatchObject({ status: 'ok' });
      expect(result!.content).toContain('the answer is in a.txt');
      expect(verifyLog(parent).violations).toEqual([]);
      expect(verifyLog(child).violations).toEqual([]);
      await replaysIdentically(child);
      await replaysIdentically(parent);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a delegate row's model: the child's spend is counted at that model's price, the parent's at its own", async () => {
    const cheap = createScriptedProviderFromFunction(() => ({ text: 'explored', usage: { inputTokens: 1_000_000, outputTokens: 0 } }), { name: 'gpt-4o-mini' });
    const cheapPlugin: Plugin = { name: 'cheap-model', provides: [MODEL], apply: (ctx) => void ctx.provide(MODEL, cheap) };
    const big = createScriptedProviderFromFunction((_req, n) => (n === 0 ? { ...delegate('explore the repo'), usage: { inputTokens: 1_000_000, outputTokens: 0 } } : { text: 'patched', usage: { inputTokens: 0, outputTokens: 0 } }), { name: 'gpt-4o' });
    parentOf(() => ({ text: 'unused' }), {
      services: { model: big },
      settings: { budget: { usd: 100 } },
      loaded: new Map([['/virtual/cheap-model.js', cheapPlugin]]),
      patch: [{ id: 'tool:delegate', use: 'delegate', config: { model: { use: '/virtual/cheap-model.js' } } }],
    });
    const out = await h!.session.run('go');
    expect(out.reason).toBe('completed');
    const parent = h!.entries();
    expect(parent.find((e) => e.kind === 'subagent/start')).toMatchObject({ mode: 'spawn', model: 'gpt-4o-mini' });
    const mini = LIST_PRICES.models['gpt-4o-mini']!.input;
    const end = parent.find((e): e is EntryOf<'subagent/end'> => e.kind === 'subagent/end')!;
    // A million input tokens at gpt-4o-mini's price, not at gpt-4o's.
    expect(end.usage).toEqual({ tokens: 1_000_000, usd: mini });
    // The parent's own million at gpt-4o's, and the child's figure beside it: the one cap counts both.
    expect(sessionBudget(parent).used.usd).toBeCloseTo(LIST_PRICES.models['gpt-4o']!.input + mini, 10);
    expect(cheap.calls).toBe(1);
    expect(big.calls).toBe(2);
  });
});
