/**
 * The GenAI conventions' client metrics as a projection of the trace (ADR 0058):
 * each ended `chat {model}` span — itself a projection of the log — gives one
 * `gen_ai.client.operation.duration` value (its duration, seconds) and, when the
 * provider reported usage, two `gen_ai.client.token.usage` values (input and
 * output tokens, told apart by `gen_ai.token.type`); and, when the log holds
 * the time to the response's first chunk (the span's
 * `gen_ai.response.time_to_first_chunk`, ADR 0079), one
 * `gen_ai.client.operation.time_to_first_chunk` value (seconds). Pure: the same
 * spans give the same measurements.
 */
import type { TraceSpan } from './trace.js';
import { METRIC_KEYS, Operation } from './trace-conventions.js';

export interface Measurement {
  value: number;
  attributes: Record<string, string>;
}

export interface ChatMeasurements {
  /** Seconds, one per ended chat span. */
  duration: Measurement[];
  /** Tokens, an input and an output value per chat span that has usage. */
  tokens: Measurement[];
  /** Seconds, one per ended chat span whose log holds the time to its first chunk (streamed; a log from before ADR 0079 has none). */
  firstChunk: Measurement[];
}

/**
 * Contract: only spans whose `gen_ai.operation.name` is `chat` and that have ended (status ok or error) count;
 * a chat still open when the log was read has no duration yet, and is counted when a later projection ends it.
 */
export function chatMeasurements(spans: readonly TraceSpan[]): ChatMeasurements {
  const out: ChatMeasurements = { duration: [], tokens: [], firstChunk: [] };
  for (const s of spans) {
    if (s.attributes['gen_ai.operation.name'] !== Operation.CHAT || s.status.code === 'unset') continue;
    const attributes: Record<string, string> = {};
    for (const k of METRIC_KEYS) {
      const v = s.attributes[k];
      if (typeof v === 'string') attributes[k] = v;
    }
    const nanos = BigInt(s.endTimeUnixNano) - BigInt(s.startTimeUnixNano);
    const error = s.attributes['error.type'];
    out.duration.push({ value: Number(nanos < 0n ? 0n : nanos) / 1e9, attributes: typeof error === 'string' ? { ...attributes, 'error.type': error } : attributes });
    const input = s.attributes['gen_ai.usage.input_tokens'];
    const output = s.attributes['gen_ai.usage.output_tokens'];
    if (typeof input === 'number') out.tokens.push({ value: input, attributes: { ...attributes, 'gen_ai.token.type': 'input' } });
    if (typeof output === 'number') out.tokens.push({ value: output, attributes: { ...attributes, 'gen_ai.token.type': 'output' } });
    // The conventions give this metric no `error.type`: a request that broke after its first chunk still had one.
    const first = s.attributes['gen_ai.response.time_to_first_chunk'];
    if (typeof first === 'number') out.firstChunk.push({ value: first, attributes });
  }
  return out;
}
