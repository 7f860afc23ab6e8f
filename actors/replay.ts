/**
 * Replay through the machines: a recorded log is run again through the real
 * session, turn, step and tool-call machines, with every outcome taken from
 * the log — model answers (and retried failures), tool results, pre-step
 * verdicts, approval answers, the clock. No model is called and no tool runs.
 * The new log must equal the old one byte for byte (I12).
 *
 * Scope: turns are replayed one after another; input that originally arrived
 * mid-turn (steer, inject, queued followups) and cancelled turns are not
 * re-timed, so logs holding them are reported as not replayable here.
 */
import type { ModelProvider } from './ports.js';
import { createMemoryStore } from '../adapters/store/memory.js';
import { chunksOf } from '../log/chunks.js';
import type { Entry, EntryOf } from '../log/entries.js';
import type { ApprovalAnswer } from '../machines/tool-call.machine.js';
import type { ToolDefinition, ToolOutput } from '../tools/types.js';
import type { ApprovalPolicy } from './approval.js';
import { createSession } from './session.js';

export interface ReplayResult {
  /** The replayed log, as JSONL. */
  text: string;
  /** The recorded log, re-serialized the way the recorder writes it. */
  original: string;
  identical: boolean;
  /** 1-based line of the first difference, if any. */
  firstDifference?: number;
}

export class NotReplayableError extends Error {
  override name = 'NotReplayableError';
}

type Of<K extends Entry['kind']> = EntryOf<K>;
const only = <K extends Entry['kind']>(entries: readonly Entry[], kind: K) => entries.filter((e): e is Of<K> => e.kind === kind);

/** The model answers in the order they were requested: each retried failure, then the answer. */
function recordedModel(entries: readonly Entry[]): ModelProvider {
  const answers: Array<ReturnType<typeof chunksOf>> = [];
  for (const e of entries) {
    if (e.kind === 'model/retry') {
      answers.push(chunksOf([], { kind: 'error', code: e.code, message: e.message, retryAfterMs: e.delayMs }));
    } else if (e.kind === 'assistant/message') {
      answers.push(chunksOf(e.blocks, e.finish, e.usage));
    }
  }
  let next = 0;
  return {
    id: 'replay',
    async *stream() {
      const chunks = answers[next++];
      if (!chunks) {
        yield { type: 'finish', finish: { kind: 'error', code: 'EMPTY_RESPONSE', message: 'replay: the log holds no further answer' } };
        return;
      }
      yield* chunks;
    },
  };
}

/**
 * Tools whose bodies are the recorded results. The k-th dispatch of the replay
 * is the k-th dispatch of the log (the machines dispatch deterministically);
 * each result is released only after every result logged before it, so
 * parallel calls settle in the recorded order.
 */
function recordedTools(entries: readonly Entry[], real: readonly ToolDefinition[], appended: () => readonly Entry[]): { tools: ToolDefinition[]; poke: () => void } {
  const dispatches = only(entries, 'tool/dispatch');
  const results = new Map(only(entries, 'tool/result').map((r) => [r.callId, r]));
  const resultOrder = only(entries, 'tool/result').map((r) => r.callId);
  let executed = 0;
  const waiters: Array<() => void> = [];
  const settledInReplay = () => new Set(only(appended(), 'tool/result').map((r) => r.callId));
  const turnOf = (callId: string) => resultOrder.indexOf(callId);
  const ready = (callId: string) => {
    const seen = settledInReplay();
    return resultOrder.slice(0, turnOf(callId)).every((id) => seen.has(id));
  };
  const poke = () => {
    for (const w of waiters.splice(0)) w();
  };
  const tools = real.map((t): ToolDefinition => ({
    ...t,
    async execute(): Promise<ToolOutput> {
      const d = dispatches[executed++];
      const r = d && results.get(d.callId);
      if (!d || !r) return { status: 'error', code: 'REPLAY_MISSING', content: 'replay: no recorded result for this dispatch' };
      while (!ready(d.callId)) await new Promise<void>((res) => waiters.push(res));
      const out: ToolOutput = { status: r.status === 'ok' ? 'ok' : 'error', content: r.content };
      if (r.code !== undefined) out.code = r.code;
      return out;
    },
  }));
  return { tools, poke };
}

/** Contract: runs no tool and calls no model; resolves with the replayed bytes; throws `NotReplayableError` for logs outside its scope. */
export async function replayThroughMachines(entries: readonly Entry[], tools: readonly ToolDefinition[], opts: { approval?: ApprovalPolicy } = {}): Promise<ReplayResult> {
  const start = entries[0];
  if (start?.kind !== 'session/start') throw new NotReplayableError('the log does not begin with session/start');
  if (entries.some((e) => e.kind === 'user/message' && e.origin !== 'user')) throw new NotReplayableError('the log holds steer, inject or harness input, whose timing replay does not reproduce');
  if (only(entries, 'turn/end').some((e) => e.reason === 'aborted' || e.reason === 'interrupted')) throw new NotReplayableError('the log holds a cancelled or interrupted turn');

  const stamps = entries.map((e) => Date.parse(e.at));
  let tick = 0;
  const clock = () => stamps[Math.min(tick++, stamps.length - 1)]!;
  const header = only(entries, 'request/header')[0];
  const decided = new Map(only(entries, 'approval/decided').map((d) => [d.callId, d]));
  const turns = only(entries, 'turn/start');
  const ends = new Map(only(entries, 'turn/end').map((e) => [e.turn, e]));
  const entered = new Map(only(entries, 'user/message').map((u) => [u.turn, u.text]));

  const store = createMemoryStore('replay:');
  let appendedRef: () => readonly Entry[] = () => [];
  const world = recordedTools(entries, tools, () => appendedRef());
  const session = createSession({
    id: start.id,
    cwd: start.cwd,
    bridleHome: '/nonexistent-bridle-home',
    model: recordedModel(entries),
    modelName: start.model,
    store,
    clock,
    tools: world.tools,
    shell: { id: 'replay', run: () => Promise.reject(new Error('replay runs no command')) },
    system: header?.system,
    approval: opts.approval ?? (only(entries, 'approval/asked').length ? 'ask' : 'auto'),
    answerer: async (req): Promise<ApprovalAnswer> => {
      const d = decided.get(req.callId);
      return d ? { outcome: d.outcome, by: d.by } : { outcome: 'unavailable', by: 'replay' };
    },
    depth: start.depth,
    parent: start.parent,
    sleep: async () => {},
    preStep: async ({ turn, text }) => {
      const t = entered.get(turn);
      if (t !== undefined) return { kind: 'enter', text: t };
      const end = ends.get(turn);
      return end?.reason === 'blocked' ? { kind: 'reject', reason: end.cause ?? '' } : { kind: 'enter', text };
    },
  });
  appendedRef = () => session.recorder.entries;
  session.recorder.onEntry((e) => {
    if (e.kind === 'tool/result') world.poke();
  });
  for (const t of turns) await session.run(t.input);
  await session.close();

  const original = entries.map((e) => JSON.stringify(e)).join('\n') + '\n';
  const text = store.text();
  const a = original.split('\n');
  const b = text.split('\n');
  const diff = a.findIndex((line, i) => line !== b[i]);
  const res: ReplayResult = { text, original, identical: text === original };
  if (!res.identical) res.firstDifference = (diff < 0 ? Math.min(a.length, b.length) : diff) + 1;
  return res;
}
