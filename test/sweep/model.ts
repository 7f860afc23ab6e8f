/**
 * The sweep's model: for each request it picks, from the world's seed and the
 * request's index, an answer — text, tool calls (unknown tools, malformed or
 * wrong arguments among them), an error finish (TRANSPORT, SERVER,
 * RATE_LIMIT, AUTH), an empty answer, a stream that stops without a finish,
 * or one that throws — and a pace (synchronous, per microtask, per timer
 * tick) that gives cancels something to land on. Independently of that, an
 * answer may carry hostile usage numbers (which the log's schema rejects: the
 * turn must end LOG_ENTRY_REJECTED, not crash), or stall midway and end as a
 * provider with a deadline ends it, TIMEOUT (openai-deadlines.ts).
 */
import type { ModelProvider } from '../../ports/model.js';
import { responseChunks } from '../../adapters/model/scripted.js';
import type { ScriptedResponse } from '../../adapters/model/scripted-script.js';
import type { Chunk } from '../../log/chunks.js';
import { rngFor, type Rng } from './prng.js';
import { BEHAVIOURS } from './tools.js';

export type Pace = 'sync' | 'microtask' | 'tick';
export type Reply =
  | { kind: 'answer'; response: ScriptedResponse; pace: Pace }
  /** The stream ends after `keep` chunks, without a finish: the stream actor must add TRANSPORT (I8). */
  | { kind: 'cut'; response: ScriptedResponse; keep: number; pace: Pace }
  /** The provider breaks its contract and throws across the stream. */
  | { kind: 'throw'; pace: Pace }
  /** After `keep` chunks nothing comes for STALL_MS; then the stream ends TIMEOUT, as the provider's idle deadline ends it. */
  | { kind: 'stall'; response: ScriptedResponse; keep: number; pace: Pace };

export const STALL_MS = 3;
/** Usage no provider should send: past the safe integers, negative, fractional, not a number. */
const HOSTILE_USAGE = [{ inputTokens: 1, outputTokens: 1e308 }, { inputTokens: -1, outputTokens: 2 }, { inputTokens: 0.5, outputTokens: 1 }, { inputTokens: Number.NaN, outputTokens: 0 }];

const TOOLS = ['peek', 'poke', 'stamp'] as const;

function toolCall(r: Rng): NonNullable<ScriptedResponse['toolCalls']>[number] {
  const x = r.float();
  const name = r.pick(TOOLS);
  if (x < 0.1) return { name: r.pick(['nope', 'rm_rf', 'Peek']), arguments: { key: 'a', behave: 'ok' } };
  if (x < 0.2) return { name, arguments: r.pick(['{"key": ', 'not json', '[1,2', '', '{"key": "a", "behave": "ok"']) };
  if (x < 0.3) return { name, arguments: r.pick([{ key: 5, behave: 'ok' }, { key: 'a' }, { key: 'a', behave: 'explode' }, { key: 'a', behave: 'ok', extra: 1 }, { key: '' }]) };
  const args: Record<string, unknown> = { key: r.pick(['a', 'b', 'c']), behave: r.pick(BEHAVIOURS) };
  if (name === 'poke') args.value = r.int(0, 9);
  return { name, arguments: args };
}

/** Contract: pure in (seed, index). The hostile variants draw from streams of their own, so they leave every other choice as it was. */
export function planReply(seed: number, index: number): Reply {
  const reply = basePlan(seed, index);
  if (reply.kind !== 'answer' || reply.response.error) return reply;
  const h = rngFor(seed, 'hostile-stream', index);
  const x = h.float();
  if (x < 0.04) return { ...reply, response: { ...reply.response, usage: h.pick(HOSTILE_USAGE) as ScriptedResponse['usage'] } };
  if (x < 0.08) return { kind: 'stall', pace: reply.pace, response: reply.response, keep: h.int(0, responseChunks(reply.response, index).length - 1) };
  return reply;
}

function basePlan(seed: number, index: number): Reply {
  const r = rngFor(seed, 'request', index);
  const pace = r.pick(['sync', 'sync', 'microtask', 'tick'] as const);
  const x = r.float();
  // Later requests answer in words more often, so most turns end by themselves.
  const stop = Math.min(0.55, 0.1 + index * 0.04);
  if (x < 0.1) {
    const code = r.pick(['TRANSPORT', 'SERVER', 'RATE_LIMIT', 'RATE_LIMIT', 'AUTH', 'CONTEXT_WINDOW_EXCEEDED'] as const);
    return { kind: 'answer', pace, response: { error: { code, message: `sweep: ${code}`, retryAfterMs: r.int(0, 2) } } };
  }
  if (x < 0.17) {
    const response: ScriptedResponse = { text: 'Half a thought', toolCalls: [toolCall(r)] };
    return { kind: 'cut', pace, response, keep: r.int(0, responseChunks(response, index).length - 1) };
  }
  if (x < 0.19) return { kind: 'throw', pace };
  if (x < 0.22) return { kind: 'answer', pace, response: {} };
  if (x < 0.26) return { kind: 'answer', pace, response: { text: 'This answer runs out of', finish: 'length' } };
  if (x < 0.26 + stop) return { kind: 'answer', pace, response: { text: `Done (${index}).`, ...(r.chance(0.3) ? { reasoning: 'thinking' } : {}) } };
  const calls = Array.from({ length: r.int(1, 4) }, () => toolCall(r));
  return { kind: 'answer', pace, response: { ...(r.chance(0.4) ? { text: 'Let me look.' } : {}), toolCalls: calls } };
}

const wait = (pace: Pace) =>
  pace === 'sync' ? undefined : pace === 'microtask' ? Promise.resolve() : new Promise<void>((resolve) => setImmediate(resolve));

export interface SweepModel extends ModelProvider {
  /** The reply planned for each request so far. */
  readonly replies: Reply[];
}

/** Contract: keeps the model seam's promises (one finish, `aborted` on abort) except where the plan says to break them. */
export function sweepModel(seed: number): SweepModel {
  const replies: Reply[] = [];
  async function* stream(_request: unknown, signal: AbortSignal): AsyncGenerator<Chunk> {
    if (signal.aborted) return yield { type: 'finish', finish: { kind: 'aborted' } };
    const index = replies.length;
    const plan = planReply(seed, index);
    replies.push(plan);
    if (plan.kind === 'throw') {
      await wait(plan.pace);
      throw new Error('sweep: socket hang up');
    }
    const all = responseChunks(plan.response, index);
    const chunks = plan.kind === 'cut' || plan.kind === 'stall' ? all.slice(0, Math.min(plan.keep, all.length - 1)) : all;
    const open = new Set<number>();
    for (const c of chunks) {
      await wait(plan.pace);
      if (signal.aborted) {
        for (const i of open) yield { type: 'block-end', index: i };
        return yield { type: 'finish', finish: { kind: 'aborted' } };
      }
      if (c.type === 'block-start') open.add(c.index);
      if (c.type === 'block-end') open.delete(c.index);
      yield c;
    }
    if (plan.kind !== 'stall') return;
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, STALL_MS);
      signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
    });
    for (const i of open) yield { type: 'block-end', index: i };
    yield { type: 'finish', finish: signal.aborted ? { kind: 'aborted' } : { kind: 'error', code: 'TIMEOUT', message: `sweep: no data from the model for ${STALL_MS} ms (streamIdleMs)` } };
  }
  return { id: 'sweep', replies, stream: stream as ModelProvider['stream'] };
}
