/**
 * Seeded hostile streams at the wire: recorded provider bodies cut, corrupted
 * and salted with junk, servers that stall, ping, trickle, send a line that
 * never ends, or numbers and shapes no provider should send — each through
 * the real SDK and the `openai` provider. Every one must end in exactly one
 * finish, within its total deadline, with a chunk protocol that assembles
 * cleanly into blocks, usage and a finish the log's schemas accept.
 *
 *   BRIDLE_HOSTILE_STREAMS=500 npx vitest run adapters/model/openai-hostile.test.ts   more seeds (default 60)
 *   BRIDLE_HOSTILE_STREAM=17 …                                                        one seed
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Block, Finish, Usage } from '../../log/entry-values.js';
import { fixtureNames, loadFixture } from '../../test/fixtures/provider-streams/load.js';
import { run } from '../../test/helpers/model-stream.js';
import { errorReply, pause, raw, startOpenAIServer, streamReply, type OpenAIServer, type Reply, type StreamItem } from '../../test/helpers/openai-sse-server.js';
import { rngFor, type Rng } from '../../test/sweep/prng.js';
import { loadOpenAISdk } from './lazy-sdk.js';
import { createOpenAIProvider } from './openai.js';

const LIMITS = { streamIdleMs: 150, streamTotalMs: 800, maxLineBytes: 64 * 1024 };
const one = process.env.BRIDLE_HOSTILE_STREAM;
const count = Number(process.env.BRIDLE_HOSTILE_STREAMS ?? 60);
const seeds = one !== undefined ? [Number(one)] : Array.from({ length: count }, (_, i) => i + 1);

let srv: OpenAIServer;
// The SDK loads at the first request (ADR 0071): loaded here, so the timings below are the deadlines' alone.
beforeAll(async () => void (srv = await startOpenAIServer(), await loadOpenAISdk()));
afterAll(() => srv.close());

const bodies = fixtureNames().map((n) => loadFixture(n).body);
const frame = (payload: unknown) => raw(`data: ${JSON.stringify(payload)}\n\n`);
const chunkOf = (delta: unknown, extra: Record<string, unknown> = {}) => ({ id: 'x', object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: null }], ...extra });

/** Numbers and shapes no provider should send. */
function junkPayload(r: Rng): unknown {
  const n = r.pick([1e308, -1, 0.5, Number.MAX_SAFE_INTEGER + 2, -0, 2 ** 31]);
  return r.pick<unknown>([
    { choices: {} },
    { choices: [{ index: 0, delta: 'text' }] },
    { choices: [{ index: n, delta: { content: 'other choice' } }] },
    { choices: [{ index: 0, delta: { content: ['text', { type: 'text', text: 7 }, { type: 'thinking', thinking: 'plain' }] } }] },
    { choices: [{ index: 0, delta: { tool_calls: [{ index: n, id: 5, function: { name: ['x'], arguments: {} } }] } }] },
    { choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'dup', function: { name: 'ls', arguments: '{}' } }, { index: 1, id: 'dup', function: { name: 'ls', arguments: '{}' } }] } }] },
    { choices: [{ index: 0, delta: { refusal: 42, reasoning_content: { a: 1 } }, finish_reason: 7 }] },
    { choices: [], usage: { prompt_tokens: n, completion_tokens: 'many', completion_tokens_details: { reasoning_tokens: n }, prompt_tokens_details: null } },
    { choices: [], x_groq: { usage: { prompt_tokens: n, completion_tokens: -n } } },
    { choices: [{ index: 0, delta: {}, finish_reason: r.pick(['insufficient_system_resource', 'weird', 'STOP', '']) }] },
    { error: { message: 'mid-stream', code: r.pick<unknown>([n, { deep: 1 }, 'rate_limit_exceeded', null]), status: n } },
    [1, 2, 3],
    null,
  ]);
}

/** Cuts `body` into pieces of 1–997 bytes by `r`. */
function pieces(body: Uint8Array, r: Rng): StreamItem[] {
  const out: StreamItem[] = [];
  for (let at = 0; at < body.length; ) {
    const size = r.int(1, 997);
    out.push(raw(body.subarray(at, at + size)));
    at += size;
  }
  return out;
}

type Plan = { kind: string; reply: Reply };

function plan(seed: number): Plan {
  const r = rngFor(seed, 'hostile-wire');
  const body = r.pick(bodies);
  const kind = r.pick(['truncated', 'corrupted', 'salted', 'junk', 'pings', 'stall', 'trickle', 'giant-line', 'after-done', 'cr-only', 'error-body-stall', 'empty']);
  switch (kind) {
    case 'truncated':
      return { kind, reply: streamReply(pieces(body.subarray(0, r.int(0, body.length - 1)), r), { done: false }) };
    case 'corrupted': {
      const lines = body.toString('utf8').split('\n').map((l) => (l.startsWith('data: {') && r.chance(0.2) ? l.slice(0, r.int(6, l.length)) : l));
      return { kind, reply: streamReply(pieces(Buffer.from(lines.join('\n')), r), { done: false }) };
    }
    case 'salted': {
      const bytes = Buffer.from(body);
      for (let i = r.int(1, 6); i > 0; i--) bytes[r.int(0, bytes.length - 1)] = r.pick([0x00, 0x0d, 0xff, 0x0a, 0x3a]);
      return { kind, reply: streamReply(pieces(bytes, r), { done: false }) };
    }
    case 'junk': {
      const head = pieces(body.subarray(0, r.int(0, Math.min(2000, body.length))), r);
      const junk = Array.from({ length: r.int(1, 4) }, () => frame(junkPayload(r)));
      return { kind, reply: streamReply([...head, raw('\n\n'), ...junk, frame(chunkOf({ content: 'x' })), frame({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })]) };
    }
    case 'pings':
      return { kind, reply: streamReply([frame(chunkOf({ content: 'hi' })), ...Array.from({ length: 200 }, () => [raw(': ping\n\n'), pause(10)]).flat()]) };
    case 'stall':
      return { kind, reply: streamReply([...pieces(body.subarray(0, r.int(0, body.length - 1)), r), pause(2_000)]) };
    case 'trickle':
      return { kind, reply: streamReply([...body.subarray(0, 400)].flatMap((b) => [raw(Uint8Array.of(b)), pause(r.int(0, 3))]), { done: false }) };
    case 'giant-line':
      return { kind, reply: streamReply([raw('data: {"choices":[{"index":0,"delta":{"content":"'), ...Array.from({ length: 40 }, () => raw('z'.repeat(4096)))], { done: false }) };
    case 'after-done':
      return { kind, reply: streamReply([...pieces(body, r), frame(chunkOf({ content: 'after the end' })), raw('data: [DONE]\n\n')]) };
    case 'cr-only':
      return { kind, reply: streamReply(pieces(Buffer.from(body.toString('utf8').replace(/\n/g, '\r')), r), { done: false }) };
    case 'error-body-stall':
      return { kind, reply: r.chance(0.5) ? errorReply(r.pick([400, 401, 429, 500, 503]), 'x'.repeat(r.int(0, 100))) : { type: 'hang' } };
    default:
      return { kind, reply: streamReply([], { done: r.chance(0.5) }) };
  }
}

const outcomes = new Map<string, number>();

describe('hostile streams at the wire', () => {
  it.each(seeds)('seed %i', async (seed) => {
    const p = plan(seed);
    srv.enqueue(p.reply);
    const t0 = performance.now();
    const d = await run(createOpenAIProvider({ model: 'm', baseURL: srv.url, apiKey: 'sk-test', ...LIMITS }));
    const ms = performance.now() - t0;
    const f = d.finish;
    const key = `${p.kind} → ${f?.kind === 'error' ? f.code : f?.kind === 'ok' ? f.reason : f?.kind}`;
    outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
    const where = `seed ${seed} (${p.kind}); reproduce: BRIDLE_HOSTILE_STREAM=${seed} npx vitest run adapters/model/openai-hostile.test.ts`;
    expect(d.thrown, where).toBeUndefined();
    expect(d.problems, where).toEqual([]);
    expect(ms, where).toBeLessThan(LIMITS.streamTotalMs + 1_000);
    // What the step would log: every block, the usage and the finish pass the log's schemas.
    for (const b of d.assembly.blocks) expect(Block.safeParse(b).success, where).toBe(true);
    if (d.assembly.usage) expect(Usage.safeParse(d.assembly.usage).success, where).toBe(true);
    expect(Finish.safeParse(f).success, where).toBe(true);
  });

  afterAll(() => {
    if (process.env.BRIDLE_HOSTILE_STATS) console.log([...outcomes].sort().map(([k, n]) => `${k}: ${n}`).join('\n'));
  });
});
