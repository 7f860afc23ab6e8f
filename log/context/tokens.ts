/**
 * The token estimate: a quarter of the code points of the serialized request.
 * It is defined as a sum over parts (system prompt, tool schemas, each
 * message) so a meter can keep it incrementally and still agree exactly with
 * `estimateRequestTokens` of the whole request.
 */
import type { ModelMessage, ModelRequest } from '../messages.js';
import type { ToolSpec } from '../entry-values.js';
import { plainArray, plainObject } from '../plain-json.js';

/** Code points, not UTF-16 units: an emoji counts once. */
export function codePoints(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length - 1; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

export const CHARS_PER_TOKEN = 4;

/** Contract: pure; never negative. */
export const tokensOfChars = (chars: number): number => Math.max(0, Math.ceil(chars / CHARS_PER_TOKEN));

/** Past this depth a value is measured by serializing it (which also throws for a cycle, as `JSON.stringify` does). */
const WALKED_DEPTH = 64;

/** The code points of `s` as `JSON.stringify` writes it, quotes included: its escapes are ASCII, a surrogate pair one code point. */
function stringChars(s: string): number {
  let n = 2;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x20 && c !== 0x22 && c !== 0x5c && (c < 0xd800 || c > 0xdfff)) n++;
    else if (c === 0x22 || c === 0x5c || c === 8 || c === 9 || c === 10 || c === 12 || c === 13) n += 2;
    else if (c < 0x20) n += 6;
    else if (c <= 0xdbff && i + 1 < s.length && s.charCodeAt(i + 1) >= 0xdc00 && s.charCodeAt(i + 1) <= 0xdfff) (n++, i++);
    // A lone surrogate half is written as `\udxxx`.
    else n += 6;
  }
  return n;
}

/**
 * Contract: `codePoints(JSON.stringify(v))`, undefined where that is undefined (and throwing where it throws), without
 * the string: strings, finite numbers, booleans, null, plain arrays and plain objects are walked; anything else (a
 * `toJSON`, a class, a bigint) is serialized to be measured.
 */
function jsonChars(v: unknown, depth: number): number | undefined {
  switch (typeof v) {
    case 'string':
      return stringChars(v);
    case 'number':
      return Number.isFinite(v) ? String(v).length : 4;
    case 'boolean':
      return v ? 4 : 5;
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
    case 'object':
      if (v === null) return 4;
      if (depth >= WALKED_DEPTH) break;
      if (plainArray(v)) {
        let n = v.length === 0 ? 2 : 1 + v.length;
        for (let i = 0; i < v.length; i++) n += jsonChars(v[i], depth + 1) ?? 4;
        return n;
      }
      if (plainObject(v)) {
        let n = 1;
        let none = true;
        for (const k of Object.keys(v)) {
          const c = jsonChars(v[k], depth + 1);
          if (c === undefined) continue;
          n += stringChars(k) + 2 + c;
          none = false;
        }
        return none ? 2 : n;
      }
      break;
  }
  const s = JSON.stringify(v) as string | undefined;
  return s === undefined ? undefined : codePoints(s);
}

/** Contract: pure; `codePoints(JSON.stringify(m))`, counted without building the string (the meter measures every message, #26). */
export const messageChars = (m: ModelMessage): number => jsonChars(m, 0) ?? codePoints(JSON.stringify(m));

export const headerChars = (h: { system: string; tools: readonly ToolSpec[] }): number => codePoints(h.system) + codePoints(JSON.stringify(h.tools));

/** The serialized size of a request, in code points: system + tools + every message. */
export function requestChars(r: Pick<ModelRequest, 'system' | 'tools' | 'messages'>): number {
  let n = headerChars(r);
  for (const m of r.messages) n += messageChars(m);
  return n;
}

/** Contract: pure; the estimate every window check in bridle uses (labelled an estimate wherever it is shown). */
export const estimateRequestTokens = (r: Pick<ModelRequest, 'system' | 'tools' | 'messages'>): number => tokensOfChars(requestChars(r));
