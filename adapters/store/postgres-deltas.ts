/**
 * Live model chunks (`session/delta`) between workers (ADR 0035): the worker
 * that runs a session sends its chunks, a few at a time, as notifications of
 * the shared store; a worker relaying the session hands them to its clients.
 * They are not logged and not durable — the logged `assistant/message` is
 * the truth — so a notification that is lost costs live text, never an entry.
 *
 * A payload is `<session id>\n<JSON array of { step, chunk }>`, at most
 * `maxBytes` of UTF-8 (Postgres refuses a NOTIFY payload of 8000 bytes or
 * more): a relay reads the id before it parses anything.
 */
import type { Delta } from '../../ports/relay.js';

/** Under Postgres's NOTIFY payload limit (8000 bytes), with room to spare. */
export const DELTA_PAYLOAD_BYTES = 7000;

const bytes = (s: string) => Buffer.byteLength(s, 'utf8');

/** A text or reasoning delta too big for one payload, as deltas of the same block that are not (by code point). */
function splitText(d: Delta, room: number): Delta[] {
  const c = d.chunk;
  if (c.type !== 'text-delta' && c.type !== 'reasoning-delta') return [];
  const out: Delta[] = [];
  let piece = '';
  const emit = () => {
    if (piece) out.push({ step: d.step, chunk: { ...c, text: piece } });
    piece = '';
  };
  for (const cp of c.text) {
    // The escaped form is what counts: a quote or a control character grows in JSON.
    if (bytes(JSON.stringify({ step: d.step, chunk: { ...c, text: piece + cp } })) > room) emit();
    piece += cp;
  }
  emit();
  return out;
}

/**
 * Contract: pure. The deltas of session `id`, in order, as payloads of at most `maxBytes` each; a text or
 * reasoning delta bigger than that is split into several of its block, and any other chunk that cannot fit
 * (a tool call's arguments in one huge delta) is left out and counted in `dropped`.
 */
export function packDeltas(id: string, deltas: readonly Delta[], maxBytes = DELTA_PAYLOAD_BYTES): { payloads: string[]; dropped: number } {
  const head = `${id}\n`;
  // `[` and `]`, and a comma between items.
  const room = maxBytes - bytes(head) - 2;
  const payloads: string[] = [];
  let items: string[] = [];
  let size = 0;
  let dropped = 0;
  const flush = () => {
    if (items.length) payloads.push(`${head}[${items.join(',')}]`);
    items = [];
    size = 0;
  };
  for (const d of deltas) {
    const one = JSON.stringify(d);
    const pieces = bytes(one) <= room ? [one] : splitText(d, room).map((p) => JSON.stringify(p));
    if (pieces.length === 0) dropped++;
    for (const p of pieces) {
      const n = bytes(p) + (items.length ? 1 : 0);
      if (size + n > room) flush();
      size += bytes(p) + (items.length ? 1 : 0);
      items.push(p);
    }
  }
  flush();
  return { payloads, dropped };
}

/** Contract: pure and total. The deltas a payload carries for session `id`; none for another session's or for one that does not parse. */
export function unpackDeltas(id: string, payload: string): Delta[] {
  if (!payload.startsWith(`${id}\n`)) return [];
  try {
    const items = JSON.parse(payload.slice(id.length + 1)) as unknown;
    if (!Array.isArray(items)) return [];
    return items.filter((d): d is Delta => typeof d === 'object' && d !== null && typeof (d as Delta).step === 'string' && typeof (d as Delta).chunk?.type === 'string');
  } catch {
    return [];
  }
}
