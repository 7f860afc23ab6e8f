/**
 * How much one log entry may hold, so that every log bridle writes, bridle
 * can read back (issue #20 item 4): the JSONL reader refuses a line over
 * 256 MiB (`adapters/store/jsonl-read.ts`). Sizes are measured as written —
 * the UTF-8 bytes of the JSON-escaped text — never in characters: a control
 * character takes six bytes on the line, a CJK character three.
 *
 * The two things a model or a tool can inflate without bound are capped
 * where they arise: an assistant answer is cut mid-stream with the finish
 * `OUTPUT_TOO_LARGE` (`actors/stream-model.ts`), a tool result's content is
 * cut with a note (`draft-tool-result.ts`). The recorder refuses any entry
 * over `MAX_ENTRY_BYTES` before it reaches the store: the backstop for
 * whatever else grows (a system prompt, a user's input, a summary).
 */

/** An assistant answer's blocks (text, reasoning, tool-call arguments), escaped. */
export const MAX_ANSWER_BYTES = 4 * 1024 * 1024;
/** A tool result's content, escaped. */
export const MAX_RESULT_BYTES = 4 * 1024 * 1024;
/** Any one line: well under the reader's 256 MiB, with room for an entry holding a capped answer and more. */
export const MAX_ENTRY_BYTES = 32 * 1024 * 1024;

/** The bytes code unit `c` of a string takes inside a JSON string on the line (a surrogate half: see below). */
const unitBytes = (c: number): number =>
  c === 0x22 || c === 0x5c ? 2 : c < 0x20 ? (c === 8 || c === 9 || c === 10 || c === 12 || c === 13 ? 2 : 6) : c < 0x80 ? 1 : c < 0x800 ? 2 : 3;

const isHigh = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLow = (c: number) => c >= 0xdc00 && c <= 0xdfff;

/**
 * Contract: pure; the UTF-8 bytes `JSON.stringify(s)` spends on `s`, quotes left out. A surrogate pair is one
 * four-byte character; a lone half is escaped (`\udxxx`, six bytes), as JSON.stringify writes it.
 */
export function escapedBytes(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (isHigh(c) && i + 1 < s.length && isLow(s.charCodeAt(i + 1))) {
      n += 4;
      i++;
    } else n += isHigh(c) || isLow(c) ? 6 : unitBytes(c);
  }
  return n;
}

/** Contract: pure; whether `line` (already JSON: no escaping left to count) takes more than `max` UTF-8 bytes. Cheap when it is short. */
export function isOverBytes(line: string, max = MAX_ENTRY_BYTES): boolean {
  if (line.length * 3 <= max) return false;
  if (line.length > max) return true;
  let n = 0;
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (isHigh(c) && i + 1 < line.length && isLow(line.charCodeAt(i + 1))) {
      n += 4;
      i++;
    } else n += c < 0x80 ? 1 : c < 0x800 ? 2 : 3;
    if (n > max) return true;
  }
  return false;
}

/** Contract: pure; the longest prefix of `s` whose escaped size is at most `max`, never splitting a surrogate pair. */
export function prefixWithin(s: string, max: number): string {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const pair = isHigh(c) && i + 1 < s.length && isLow(s.charCodeAt(i + 1));
    const cost = pair ? 4 : isHigh(c) || isLow(c) ? 6 : unitBytes(c);
    if (n + cost > max) return s.slice(0, i);
    n += cost;
    if (pair) i++;
  }
  return s;
}
