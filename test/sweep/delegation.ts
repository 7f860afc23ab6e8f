/**
 * The sweep's delegation worlds: the same hostile worlds (model, tools,
 * approvals, cancels), where some answers also delegate — one or two calls
 * at once, through `spawn`, `fork`, `mock-remote`, a provider whose child
 * crashes, or one that does not exist — down to a depth limit, and the
 * children (whole sessions of the same product, the same hostile model)
 * delegate in turn. What must hold besides every session's own invariants:
 * each child the parent brackets has one `subagent/end` after its start and
 * a log of its own that verifies, at its parent's depth + 1, under approval
 * `never` (no question asked, no write dispatched); a refused delegation
 * leaves no trace; a delegate result is `ok` exactly when its child's turn
 * completed.
 */
import { createMemorySessionStore } from '../../adapters/store/memory.js';
import { responseChunks } from '../../adapters/model/scripted.js';
import type { ScriptedResponse } from '../../adapters/model/scripted-script.js';
import type { Chunk } from '../../log/chunks.js';
import type { Entry, EntryOf } from '../../log/entries.js';
import { verifyLog } from '../../log/verify.js';
import { SUBAGENTS } from '../../ports/index.js';
import type { ModelProvider } from '../../ports/model.js';
import type { ChildSession } from '../../ports/subagents.js';
import type { ToolDefinition } from '../../ports/tools.js';
import type { Plugin } from '../../plugins/host.js';
import { toolsOfLog } from '../../replay/setup.js';
import { delegatePlugin } from '../../runtime/subagents/delegate.js';
import { rngFor } from './prng.js';
import type { Delegating } from './run-world.js';
import type { SweepModel } from './model.js';
import { sweepTools } from './tools.js';

export const PROVIDERS = ['spawn', 'spawn', 'fork', 'mock-remote', 'crashy', 'nope'] as const;

/** A provider whose every child dies before its turn ends (a process killed under it), with `why`. */
export const crashyProvider = (why = 'sweep: the child died'): Plugin => ({
  name: 'crashy-provider',
  inject: [SUBAGENTS],
  apply: (ctx) =>
    void ctx.effect(() =>
      ctx.get(SUBAGENTS).register(
        {
          name: 'crashy',
          advertised: {},
          open: async (req): Promise<ChildSession> => ({
            id: req.id,
            location: `crashy:${req.id}`,
            entries: () => [],
            send: async () => undefined,
            run: () => new Promise((_, reject) => queueMicrotask(() => reject(new Error(why)))),
            cancel: async () => undefined,
            close: async () => undefined,
          }),
        },
        'crashy',
      ),
    ),
});
const crashy = crashyProvider();

/** The delegation world of a seed: its depth limit, and how often its answers delegate. Pure in `seed`. */
export function delegationWorld(seed: number) {
  const r = rngFor(seed, 'delegation');
  return { maxDepth: r.int(1, 2), rate: r.pick([0.2, 0.35, 0.5]) };
}

/** The world's model, where some answers delegate instead; what it answers otherwise is the sweep model's own. */
export function delegating(seed: number): (model: SweepModel) => Delegating {
  const w = delegationWorld(seed);
  return (inner) => {
    let index = 0;
    const model: ModelProvider = {
      id: 'sweep-delegating',
      async *stream(request, signal): AsyncGenerator<Chunk> {
        const i = index++;
        const r = rngFor(seed, 'delegate', i);
        if (!signal.aborted && r.chance(w.rate)) {
          const calls = Array.from({ length: r.int(1, 2) }, (_, n) => ({ name: 'delegate', arguments: { task: `sweep task ${i}.${n}`, provider: r.pick(PROVIDERS) } }));
          const response: ScriptedResponse = { toolCalls: calls };
          for (const c of responseChunks(response, 1000 + i)) {
            if (signal.aborted) return yield { type: 'finish', finish: { kind: 'aborted' } };
            await Promise.resolve();
            yield c;
          }
          return;
        }
        yield* inner.stream(request, signal);
      },
    };
    return {
      model,
      plugins: [delegatePlugin, crashy],
      patch: [{ insert: true, id: 'subagent:mock-remote', use: 'mock-remote' }],
      settings: { maxDepth: w.maxDepth },
      sessions: createMemorySessionStore(),
    };
  };
}

const logOf = (sessions: { get(id: string): { text(): string } | undefined }, id: string): Entry[] | undefined => {
  const text = sessions.get(id)?.text();
  return text === undefined ? undefined : text.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Entry);
};

/** The stand-in a checker validates delegate calls with: the one replay builds from the logged header. */
export function delegateTools(es: readonly Entry[]): ToolDefinition[] {
  return toolsOfLog(es, sweepTools({ started: [] })).filter((t) => t.name === 'delegate');
}

/** Contract: every problem of the delegation tree under `id`, in words; its children's logs are visited down the tree. */
export function checkTree(sessions: ReturnType<typeof createMemorySessionStore>, id: string, es: readonly Entry[], depth = 0, out: string[] = [], children: Entry[][] = []): { problems: string[]; children: Entry[][] } {
  const starts = es.filter((e): e is EntryOf<'subagent/start'> => e.kind === 'subagent/start');
  const ends = es.filter((e): e is EntryOf<'subagent/end'> => e.kind === 'subagent/end');
  for (const s of starts) {
    const matching = ends.filter((e) => e.child === s.child && e.callId === s.callId);
    if (matching.length !== 1) out.push(`${id}: child ${s.child} has ${matching.length} subagent/end`);
    else if (matching[0]!.seq < s.seq) out.push(`${id}: child ${s.child} ends before it starts`);
    if (s.depth !== depth + 1) out.push(`${id}: child ${s.child} at depth ${s.depth}, not ${depth + 1}`);
    if (s.mode === 'crashy') {
      // Dead by itself, or cancelled before it died.
      if (matching[0] && matching[0].code !== 'SUBAGENT_CRASHED' && matching[0].code !== 'ABORTED') out.push(`${id}: the crashed child ${s.child} ended ${matching[0].reason}/${matching[0].code}`);
      continue;
    }
    const child = logOf(sessions, s.child);
    if (!child) {
      out.push(`${id}: child ${s.child} has no log`);
      continue;
    }
    children.push(child);
    const v = verifyLog(child);
    for (const x of v.violations) out.push(`${s.child}: verifyLog: ${x.violation} at seq ${x.seq}: ${x.message}`);
    if (child[0]?.kind !== 'session/start' || child[0].depth !== depth + 1 || child[0].parent !== id) out.push(`${s.child}: session/start does not say depth ${depth + 1}, parent ${id}`);
    // Approval never: nothing asks, and nothing that writes is dispatched.
    if (child.some((e) => e.kind === 'approval/asked')) out.push(`${s.child}: a child asked for approval`);
    for (const d of child.filter((e): e is EntryOf<'tool/dispatch'> => e.kind === 'tool/dispatch')) if (d.name === 'poke' || d.name === 'stamp') out.push(`${s.child}: ${d.name} dispatched under approval never`);
    if (child.filter((e) => e.kind === 'turn/start').length > 1) out.push(`${s.child}: a child ran more than one turn`);
    if (child.some((e) => e.kind === 'turn/start') && child.filter((e) => e.kind === 'turn/start').length !== child.filter((e) => e.kind === 'turn/end').length) out.push(`${s.child}: its turn never ended`);
    checkTree(sessions, s.child, child, depth + 1, out, children);
  }
  // A result is ok exactly when its child completed; a refused one left no bracket and no log.
  for (const r of es.filter((e): e is EntryOf<'tool/result'> => e.kind === 'tool/result' && e.name === 'delegate')) {
    const started = starts.find((s) => s.callId === r.callId);
    const end = ends.find((e) => e.callId === r.callId);
    if (r.status === 'ok' && end?.reason !== 'completed') out.push(`${id}: ${r.callId} ok, but its child ended ${end?.reason ?? 'never'}`);
    if (r.code === 'DEPTH_LIMIT' || r.code === 'SUBAGENT_PROVIDER_UNKNOWN') {
      if (started) out.push(`${id}: ${r.callId} was refused (${r.code}) after its child started`);
      if (logOf(sessions, `${id}.${r.callId}`)) out.push(`${id}: ${r.callId} was refused (${r.code}) but a log exists for its child`);
    }
  }
  return { problems: out, children };
}
