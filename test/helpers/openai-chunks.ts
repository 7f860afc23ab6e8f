/**
 * Builders for OpenAI chat-completions stream chunks, as the wire carries
 * them. Used with `openai-sse-server.ts`; plain objects, no SDK types, so a
 * test can also build chunks the SDK's types would forbid.
 */

export type WireChunk = Record<string, unknown>;
export type WireFinishReason = 'stop' | 'tool_calls' | 'function_call' | 'length' | 'content_filter' | null;

let created = 1_700_000_000;

/** One chunk with a single choice. */
export function chunk(delta: Record<string, unknown>, finishReason: WireFinishReason | string = null): WireChunk {
  return {
    id: 'chatcmpl-test',
    object: 'chat.completion.chunk',
    created: created++,
    model: 'test-model',
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
  };
}

/** The chunk that ends a choice: an empty delta with a finish reason. */
export const finishChunk = (reason: WireFinishReason | string): WireChunk => chunk({}, reason);

/** The usage-only chunk sent last when `stream_options.include_usage` is set. */
export function usageChunk(usage: {
  prompt_tokens: number;
  completion_tokens: number;
  reasoning_tokens?: number;
  cached_tokens?: number;
}): WireChunk {
  const { prompt_tokens, completion_tokens, reasoning_tokens, cached_tokens } = usage;
  return {
    id: 'chatcmpl-test',
    object: 'chat.completion.chunk',
    created: created++,
    model: 'test-model',
    choices: [],
    usage: {
      prompt_tokens,
      completion_tokens,
      total_tokens: prompt_tokens + completion_tokens,
      ...(reasoning_tokens !== undefined ? { completion_tokens_details: { reasoning_tokens } } : {}),
      ...(cached_tokens !== undefined ? { prompt_tokens_details: { cached_tokens } } : {}),
    },
  };
}

/** An `error` frame, as some servers send mid-stream instead of an HTTP status. */
export const errorFrame = (error: Record<string, unknown>): WireChunk => ({ error });

/** Splits `text` into about `parts` pieces (by code point, never inside a surrogate pair). */
export function split(text: string, parts: number): string[] {
  const cps = Array.from(text);
  const size = Math.max(1, Math.ceil(cps.length / Math.max(1, parts)));
  const out: string[] = [];
  for (let i = 0; i < cps.length; i += size) out.push(cps.slice(i, i + size).join(''));
  return out;
}

interface ChunkOptions {
  /** How many deltas to split the text into (default 3). */
  parts?: number;
  /** The finish reason of the last chunk; `null` ends without one. */
  finish?: WireFinishReason | string;
}

/** A role chunk, the text in a few `content` deltas, then (default) `finish_reason: 'stop'`. */
export function textChunks(text: string, options: ChunkOptions = {}): WireChunk[] {
  const finish = options.finish === undefined ? 'stop' : options.finish;
  const out = [chunk({ role: 'assistant', content: '' })];
  for (const piece of split(text, options.parts ?? 3)) out.push(chunk({ content: piece }));
  if (finish !== null) out.push(finishChunk(finish));
  return out;
}

/** `reasoning_content` deltas (DeepSeek / vLLM); no finish unless asked. */
export function reasoningChunks(text: string, options: ChunkOptions = {}): WireChunk[] {
  const out = split(text, options.parts ?? 3).map((piece) => chunk({ reasoning_content: piece }));
  if (options.finish) out.push(finishChunk(options.finish));
  return out;
}

export interface WireToolCall {
  id?: string;
  name: string;
  /** Raw argument text; sent verbatim, so malformed JSON is possible. */
  arguments: string;
}

/**
 * Tool-call deltas as OpenAI streams them: per call, a first fragment with
 * `index`, `id`, `function.name`, then `index` + argument fragments only.
 * `interleave` sends the calls' fragments round-robin (index 0, 1, 0, 1, …).
 * Ends (default) with `finish_reason: 'tool_calls'`.
 */
export function toolCallChunks(calls: WireToolCall[], options: ChunkOptions & { interleave?: boolean } = {}): WireChunk[] {
  const finish = options.finish === undefined ? 'tool_calls' : options.finish;
  const perCall = calls.map((c, index) => {
    const first = chunk({
      tool_calls: [{ index, id: c.id ?? `call_${index}`, type: 'function', function: { name: c.name, arguments: '' } }],
    });
    const rest = split(c.arguments, options.parts ?? 3).map((piece) =>
      chunk({ tool_calls: [{ index, function: { arguments: piece } }] }),
    );
    return [first, ...rest];
  });
  const out: WireChunk[] = [];
  if (options.interleave) {
    const longest = Math.max(0, ...perCall.map((p) => p.length));
    for (let i = 0; i < longest; i++) for (const p of perCall) if (p[i]) out.push(p[i]!);
  } else {
    for (const p of perCall) out.push(...p);
  }
  if (finish !== null) out.push(finishChunk(finish));
  return out;
}
