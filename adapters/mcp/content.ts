/**
 * An MCP call result as the text a bridle tool result carries. Text parts
 * are kept as they are; a part that is not text (an image, audio, a binary
 * resource, a link) is described in one bracketed line — its type, MIME
 * type, size, URI — never dropped in silence and never pasted as base64.
 * Structured content is shown as compact JSON when no text part carries it,
 * and not at all when it only mirrors the parts already described (the
 * reference filesystem server's `read_media_file` sends its image twice);
 * any base64 inside it is described by size, never pasted (issue 23: a
 * 300 KiB image reached the model as 65,601 characters of base64). The
 * whole is capped, cut on a code point, with a note saying how much was cut.
 */

/** The result text's cap, the bash tool's output cap. */
export const MAX_RESULT_CHARS = 64 * 1024;

type Part = { type: string; [k: string]: unknown };

export interface McpResultLike {
  content?: readonly Part[];
  structuredContent?: unknown;
  isError?: boolean;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** Bytes a base64 string decodes to. */
function decodedBytes(b64: string): number {
  const clean = b64.replace(/\s+/g, '');
  const pad = clean.endsWith('==') ? 2 : clean.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((clean.length * 3) / 4) - pad);
}

function size(bytes: number): string {
  return bytes < 1024 ? `${bytes} bytes` : `${(bytes / 1024).toFixed(1)} KiB`;
}

function describe(part: Part): string {
  switch (part.type) {
    case 'text':
      return str(part.text) ?? '';
    case 'image':
    case 'audio': {
      const data = str(part.data) ?? '';
      return `[${part.type}: ${str(part.mimeType) ?? 'unknown type'}, ${size(decodedBytes(data))}; not shown: this session passes text only]`;
    }
    case 'resource': {
      const r = (part.resource ?? {}) as Record<string, unknown>;
      const uri = str(r.uri) ?? '(no uri)';
      const mime = str(r.mimeType);
      const text = str(r.text);
      if (text !== undefined) return `[resource ${uri}${mime ? ` (${mime})` : ''}]\n${text}`;
      return `[resource ${uri}${mime ? ` (${mime})` : ''}: ${size(decodedBytes(str(r.blob) ?? ''))} of binary data; not shown]`;
    }
    case 'resource_link': {
      const desc = str(part.description);
      return `[resource link: ${str(part.name) ?? str(part.title) ?? '(unnamed)'} <${str(part.uri) ?? ''}>${str(part.mimeType) ? ` (${str(part.mimeType)})` : ''}${desc ? ` — ${desc}` : ''}]`;
    }
    default:
      return `[${String(part.type)} content; not shown: bridle does not know this kind of part]`;
  }
}

/** A string this long in the base64 alphabet is taken for binary data, not for words. */
const BASE64_MIN = 256;
const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;
const isBase64 = (v: string) => v.length >= BASE64_MIN && BASE64.test(v.replace(/\s+/g, ''));

/** The value with every base64 string in it, at any depth, replaced by a note of its size. */
function withoutBinary(v: unknown, depth = 0): unknown {
  if (typeof v === 'string') return isBase64(v) ? `[base64 data, ${size(decodedBytes(v))}; not shown]` : v;
  if (typeof v !== 'object' || v === null || depth > 64) return v;
  if (Array.isArray(v)) return v.map((x) => withoutBinary(x, depth + 1));
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, withoutBinary(x, depth + 1)]));
}

/** Whether structured content is only `{ content: [...] }` repeating the result's non-text parts, type for type. */
function mirrorsParts(structured: unknown, parts: readonly Part[]): boolean {
  if (typeof structured !== 'object' || structured === null || Array.isArray(structured)) return false;
  const keys = Object.keys(structured);
  const copy = (structured as { content?: unknown }).content;
  if (keys.length !== 1 || !Array.isArray(copy) || copy.length !== parts.length || parts.length === 0) return false;
  return copy.every((c, i) => typeof c === 'object' && c !== null && (c as Part).type === parts[i]?.type && parts[i]?.type !== 'text');
}

/** Cuts `text` to at most `max` UTF-16 units without splitting a surrogate pair, noting what was left out. */
export function capText(text: string, max = MAX_RESULT_CHARS): string {
  if (text.length <= max) return text;
  let end = max;
  const c = text.charCodeAt(end - 1);
  if (c >= 0xd800 && c <= 0xdbff) end--;
  return `${text.slice(0, end)}\n[… ${text.length - end} more characters cut: the result was longer than ${max}]`;
}

/** Contract: pure, never throws; the text of a call result, every part accounted for. */
export function resultText(result: McpResultLike, max = MAX_RESULT_CHARS): string {
  const parts = Array.isArray(result.content) ? result.content : [];
  const lines = parts.map((p) => (typeof p === 'object' && p !== null ? describe(p) : '[a content part that is not an object; not shown]'));
  const hasText = parts.some((p) => p?.type === 'text' && str(p.text));
  if (!hasText && result.structuredContent !== undefined && !mirrorsParts(result.structuredContent, parts)) {
    let json: string;
    try {
      json = JSON.stringify(withoutBinary(result.structuredContent)) ?? 'null';
    } catch {
      json = '[structured content that cannot be shown as JSON]';
    }
    lines.push(json);
  }
  const text = lines.join('\n');
  return capText(text === '' ? '(the tool returned no content)' : text, max);
}
