/**
 * The token estimate: a quarter of the code points of the serialized request.
 * It is defined as a sum over parts (system prompt, tool schemas, each
 * message) so a meter can keep it incrementally and still agree exactly with
 * `estimateRequestTokens` of the whole request.
 */
import type { ModelMessage, ModelRequest } from '../messages.js';
import type { ToolSpec } from '../entry-values.js';

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

export const messageChars = (m: ModelMessage): number => codePoints(JSON.stringify(m));

export const headerChars = (h: { system: string; tools: readonly ToolSpec[] }): number => codePoints(h.system) + codePoints(JSON.stringify(h.tools));

/** The serialized size of a request, in code points: system + tools + every message. */
export function requestChars(r: Pick<ModelRequest, 'system' | 'tools' | 'messages'>): number {
  let n = headerChars(r);
  for (const m of r.messages) n += messageChars(m);
  return n;
}

/** Contract: pure; the estimate every window check in bridle uses (labelled an estimate wherever it is shown). */
export const estimateRequestTokens = (r: Pick<ModelRequest, 'system' | 'tools' | 'messages'>): number => tokensOfChars(requestChars(r));
