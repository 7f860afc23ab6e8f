/**
 * The `scripted` model provider: answers from a script (a file of responses,
 * format in `scripted-script.ts` and `SCRIPTED.md`) or from a function, for
 * the demo, tests and benchmarks. It speaks the same chunk protocol as the
 * `openai` provider and keeps the same I8 promises, the `first-chunk` of a
 * streamed answer included.
 */
import { resolve } from 'node:path';
import { z } from 'zod';
import { MODEL } from '../../ports/index.js';
import type { ModelProvider } from '../../ports/model.js';
import { defineProvider } from '../../ports/provider.js';
import type { Chunk } from '../../log/chunks.js';
import type { Finish } from '../../log/entry-values.js';
import type { ModelRequest } from '../../log/messages.js';
import { loadScript, parseScript, type Script, type ScriptedResponse } from './scripted-script.js';
import { ModelCode } from '../../log/entry-values.js';

export interface ScriptedOptions {
  /** Shown wherever scripted output appears; always starts with "scripted". Default: the script's label, else "scripted". */
  label?: string;
  /** A display name for the model. */
  model?: string;
  /** The name the log records (`session/start`); default `scripted`. */
  name?: string;
  /** How many deltas reasoning and text are split into, so streaming shows (default 3). */
  deltas?: number;
  /** A pause between chunks, in ms (default 0: no timers at all). */
  delayMs?: number;
}

export interface ScriptedProvider extends ModelProvider {
  readonly label: string;
  readonly model: string | undefined;
  /** How many requests have been answered so far (a stream aborted before it started does not count). */
  readonly calls: number;
}

/** May return `undefined` (the script is exhausted) or a promise; a throw becomes an `UNKNOWN` finish. */
export type ResponseFunction = (
  request: ModelRequest,
  index: number,
) => ScriptedResponse | undefined | Promise<ScriptedResponse | undefined>;

const labelled = (label: string | undefined) => (!label ? 'scripted' : /^scripted\b/i.test(label) ? label : `scripted: ${label}`);

function split(text: string, parts: number): string[] {
  const cps = Array.from(text);
  const size = Math.max(1, Math.ceil(cps.length / Math.max(1, parts)));
  const out: string[] = [];
  for (let i = 0; i < cps.length; i += size) out.push(cps.slice(i, i + size).join(''));
  return out;
}

/**
 * The chunks that answer request number `index` with `r`: reasoning, then
 * text, then tool calls (ids `call_<index>_<n>`), usage, finish.
 * Contract: pure; ends in exactly one `finish`. An answer with no text and
 * no tool calls is `EMPTY_RESPONSE`, as from a real server.
 */
export function responseChunks(r: ScriptedResponse, index: number, deltas = 3): Chunk[] {
  if (r.error) {
    const { code, message, status, retryAfterMs } = r.error;
    const finish: Finish = { kind: 'error', code, message: message ?? `scripted error: ${code}` };
    if (status !== undefined) finish.status = status;
    if (retryAfterMs !== undefined) finish.retryAfterMs = retryAfterMs;
    return [{ type: 'finish', finish }];
  }
  const out: Chunk[] = [];
  let block = 0;
  for (const [kind, text] of [['reasoning', r.reasoning], ['text', r.text]] as const) {
    if (!text) continue;
    out.push({ type: 'block-start', index: block, block: { type: kind } });
    for (const piece of split(text, deltas)) out.push({ type: kind === 'text' ? 'text-delta' : 'reasoning-delta', index: block, text: piece });
    out.push({ type: 'block-end', index: block++ });
  }
  const calls = r.toolCalls ?? [];
  calls.forEach((c, n) => {
    const args = c.arguments === undefined ? '{}' : typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments);
    out.push({ type: 'block-start', index: block, block: { type: 'tool-call', id: `call_${index}_${n}`, name: c.name } });
    if (args) out.push({ type: 'tool-call-delta', index: block, argumentsDelta: args });
    out.push({ type: 'block-end', index: block++ });
  });
  if (r.usage) out.push({ type: 'usage', usage: r.usage });
  const reason = r.finish ?? (calls.length > 0 ? 'tool-calls' : 'stop');
  const empty = !r.text && calls.length === 0 && (reason === 'stop' || reason === 'tool-calls');
  out.push({
    type: 'finish',
    finish: empty
      ? { kind: 'error', code: ModelCode.EMPTY_RESPONSE, message: `scripted model: response ${index} has no text and no tool calls` }
      : { kind: 'ok', reason },
  });
  return out;
}

/** A pause that an abort ends at once, its timer cleared: a cancelled stream holds no timer that keeps the process up. */
const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });

/**
 * A scripted provider driven by a function of the request, for tests and
 * benchmarks that need a reactive model (keep calling a tool N times).
 * Contract: `stream` never throws (I8); an aborted signal ends the stream
 * with `finish { kind: 'aborted' }`, open blocks closed first.
 */
export function createScriptedProviderFromFunction(respond: ResponseFunction, options: ScriptedOptions = {}): ScriptedProvider {
  let calls = 0;
  let served = 0;
  const deltas = options.deltas ?? 3;
  const delayMs = options.delayMs ?? 0;

  async function* stream(request: ModelRequest, signal: AbortSignal): AsyncGenerator<Chunk> {
    if (signal.aborted) return yield { type: 'finish', finish: { kind: 'aborted' } };
    const index = calls++;
    let chunks: Chunk[];
    try {
      const r = await respond(request, index);
      if (r) served++;
      chunks = r
        ? responseChunks(r, index, deltas)
        : [{ type: 'finish', finish: { kind: 'error', code: ModelCode.EMPTY_RESPONSE, message: `scripted model: script exhausted after ${served} responses` } }];
      // An answer streams, as a real one does: its first chunk is timed by the step (ADR 0079). A scripted error is a
      // refused request, which sends no chunk; an exhausted script is no answer.
      if (r && !r.error) chunks.unshift({ type: 'first-chunk' });
    } catch (err) {
      chunks = [{ type: 'finish', finish: { kind: 'error', code: ModelCode.UNKNOWN, message: `scripted model: the response function threw: ${String(err)}` } }];
    }
    const open: number[] = [];
    for (const c of chunks) {
      if (delayMs > 0 && c.type !== 'finish') await sleep(delayMs, signal);
      if (signal.aborted) {
        for (const i of open) yield { type: 'block-end', index: i };
        return yield { type: 'finish', finish: { kind: 'aborted' } };
      }
      if (c.type === 'block-start') open.push(c.index);
      else if (c.type === 'block-end') open.splice(open.indexOf(c.index), 1);
      yield c;
    }
  }

  return {
    id: 'scripted',
    name: options.name ?? 'scripted',
    label: labelled(options.label),
    model: options.model,
    get calls() {
      return calls;
    },
    stream,
  };
}

/**
 * A scripted provider answering request N with `script.responses[N]`; past
 * the end, `EMPTY_RESPONSE` ("script exhausted after N responses").
 * Contract: throws `ScriptError` here, at construction, for an invalid
 * script; `stream` never throws.
 */
export function createScriptedProvider(script: Script, options: ScriptedOptions = {}): ScriptedProvider {
  const valid = parseScript(script);
  const used = new Set<number>();
  const firstUser = (r: ModelRequest) => {
    const m = r.messages.find((x) => x.role === 'user');
    return m?.role === 'user' ? m.content : '';
  };
  // A response that names a match waits for its request; the others answer the rest, in order.
  const pick = (request: ModelRequest): ScriptedResponse | undefined => {
    const text = firstUser(request);
    let i = valid.responses.findIndex((r, n) => !used.has(n) && r.match !== undefined && text.includes(r.match));
    if (i < 0) i = valid.responses.findIndex((r, n) => !used.has(n) && r.match === undefined);
    if (i < 0) return undefined;
    used.add(i);
    const { match: _m, ...response } = valid.responses[i]!;
    return response;
  };
  return createScriptedProviderFromFunction((request) => pick(request), {
    ...options,
    label: options.label ?? valid.label,
    model: options.model ?? valid.model,
  });
}

export const ScriptedConfig = z.strictObject({
  /** A script file (`SCRIPTED.md`); relative paths are taken from the current directory. */
  file: z.string().min(1),
  deltas: z.int().positive().optional(),
  delayMs: z.int().nonnegative().optional(),
});
export type ScriptedConfig = z.infer<typeof ScriptedConfig>;

/** The `scripted` provider of the model seam: answers from a script file, labelled scripted wherever it shows. */
export const scriptedModel = defineProvider({
  seam: MODEL,
  name: 'scripted',
  config: ScriptedConfig,
  create(c) {
    const file = resolve(c.file);
    return createScriptedProvider(loadScript(file), { name: `scripted:${c.file}`, deltas: c.deltas, delayMs: c.delayMs });
  },
});
