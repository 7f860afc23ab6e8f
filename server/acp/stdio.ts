/**
 * The ACP agent over a byte stream pair (stdio): newline-delimited JSON, as
 * the SDK's `ndJsonStream` reads and writes it, behind a frame guard. The
 * SDK treats a line longer than its limit as a fatal stream error, which over
 * stdio would end the agent; the guard holds each line until it is whole and
 * answers one that grows past `maxMessageBytes` itself, then goes on with the
 * next line:
 *
 * - a request (its `id` leads the line, as JSON-RPC writers put it) gets a
 *   `-32600` error with that id; anything else unreadable gets one with id
 *   `null`, as a parse error does;
 * - a response to one of the agent's own requests (the client answering
 *   `fs/read_text_file` with more than fits) is replaced by an error response
 *   with its id, so the request that waits for it fails instead of hanging.
 */
import { ndJsonStream, type Stream } from '@agentclientprotocol/sdk';

/** The SDK's own default: a prompt with embedded files may be large, but not without bound. */
export const DEFAULT_MAX_MESSAGE_BYTES = 32 * 1024 * 1024;

/** What leads a frame: `{"jsonrpc":"2.0","id":…,"method"|"result"|"error"` (the first two keys in either order, spaces allowed). */
const LEAD = /^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?\d{1,16}|"(?:[^"\\]|\\.){0,256}")\s*,\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"(method|result|error)"/;

const LF = 0x0a;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

export interface FrameVerdict {
  id: number | string | null;
  /** The oversized frame answers one of our requests. */
  isResponse: boolean;
}

/** Contract: pure; what the first bytes of an oversized frame say about it. */
export function readLead(head: Uint8Array): FrameVerdict {
  const m = LEAD.exec(decoder.decode(head.subarray(0, 1024)));
  if (!m) return { id: null, isResponse: false };
  let id: number | string | null = null;
  try {
    id = JSON.parse(m[1]!) as number | string;
  } catch {
    id = null;
  }
  return { id, isResponse: m[2] !== 'method' };
}

const tooLarge = (id: number | string | null, max: number) =>
  `${JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32600, message: `Invalid request: message larger than ${max} bytes`, data: { reason: 'MESSAGE_TOO_LARGE', maxMessageBytes: max } } })}\n`;

/**
 * Whole lines of at most `max` bytes from `input`; an oversized line is
 * dropped and reported through `answer` (to the peer) or `inject` (a
 * replacement line for the SDK to read).
 */
function frameGuard(max: number, answer: (line: string) => void): TransformStream<Uint8Array, Uint8Array> {
  let held: Uint8Array[] = [];
  let heldBytes = 0;
  let dropping = false;
  let lead: Uint8Array | undefined;
  const take = () => {
    const out = new Uint8Array(heldBytes);
    let at = 0;
    for (const c of held) {
      out.set(c, at);
      at += c.length;
    }
    held = [];
    heldBytes = 0;
    return out;
  };
  return new TransformStream({
    transform(chunk, controller) {
      let start = 0;
      while (start < chunk.length) {
        const nl = chunk.indexOf(LF, start);
        const end = nl === -1 ? chunk.length : nl;
        const piece = chunk.subarray(start, end);
        if (!dropping) {
          if (heldBytes + piece.length > max) {
            dropping = true;
            lead = take().subarray(0, 1024);
            if (lead.length < 1024) lead = new Uint8Array([...lead, ...piece.subarray(0, 1024 - lead.length)]);
          } else {
            held.push(piece.slice());
            heldBytes += piece.length;
          }
        }
        if (nl === -1) break;
        if (dropping) {
          const v = readLead(lead ?? new Uint8Array());
          if (v.isResponse && v.id !== null) controller.enqueue(encoder.encode(tooLarge(v.id, max)));
          else answer(tooLarge(v.id, max));
          dropping = false;
          lead = undefined;
        } else {
          const line = take();
          const out = new Uint8Array(line.length + 1);
          out.set(line);
          out[line.length] = LF;
          controller.enqueue(out);
        }
        start = nl + 1;
      }
    },
    flush(controller) {
      if (!dropping && heldBytes > 0) controller.enqueue(take());
    },
  });
}

/**
 * A guarded ACP stream over `output` and `input`. Contract: no line the SDK
 * reads is longer than `maxMessageBytes`; writes from the SDK and the guard's
 * own answers reach `output` whole and in order.
 */
export function guardedStream(output: WritableStream<Uint8Array>, input: ReadableStream<Uint8Array>, maxMessageBytes = DEFAULT_MAX_MESSAGE_BYTES): Stream {
  const writer = output.getWriter();
  let queue = Promise.resolve();
  const write = (bytes: Uint8Array) => (queue = queue.then(() => writer.write(bytes)).catch(() => undefined));
  const sdkOutput = new WritableStream<Uint8Array>({ write: (chunk) => write(chunk) });
  const guarded = input.pipeThrough(frameGuard(maxMessageBytes, (line) => void write(encoder.encode(line))));
  // The SDK's own limit sits above the guard's, so it never fires: a replacement line is small.
  return ndJsonStream(sdkOutput, guarded, { maxMessageBytes: maxMessageBytes + 4096 });
}
