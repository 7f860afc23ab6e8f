/**
 * The read buffer of bridle's stdio transport (`stdio-transport.ts`). The
 * SDK's own, past 10 MiB without a newline, throws, and its transport then
 * closes the connection and stops the server: one 50 MB
 * result, and every later call of the session failed as if the server had
 * exited (issue 20, item 8). This one holds at most `maxLineBytes` of a
 * line; past that it keeps only the line's first and last bytes, counts the
 * rest, and at the line's end hands the client, in place of the message, a
 * JSON-RPC error answering the same request id, which `connection.ts` turns
 * into `MCP_RESULT_TOO_LARGE` with the size. The connection, and the server,
 * go on. When the id cannot be read from the line's ends, `onOversized`
 * says so and the connection fails the calls in flight (ADR 0039).
 *
 * Contract: the shape of the SDK's `ReadBuffer` (`append`, `readMessage`,
 * `clear`); `readMessage` throws for a line that is not JSON-RPC, as the
 * SDK's does, and the transport reports and goes on.
 */
import { deserializeMessage, type JSONRPCMessage } from '@modelcontextprotocol/client';

/** The SDK's own limit: a message as large as it took before, and no larger. */
export const MAX_MESSAGE_BYTES = 10 * 1024 * 1024;
/** The JSON-RPC error code of the stand-in answer (implementation-defined server error range). */
export const RESULT_TOO_LARGE_RPC_CODE = -32099;
/** Enough of either end of a line to hold `{"jsonrpc":"2.0","id":…` or `…,"id":…}`. */
const ENDS = 256;

type Id = string | number;
type Item = { line: Buffer } | { message: JSONRPCMessage };

/** The request a line answers, read only where JSON-RPC serializers put it: first (after `jsonrpc`), or last. */
export function idAtEnds(head: string, tail: string): Id | undefined {
  const parse = (s: string | undefined): Id | undefined => (s === undefined ? undefined : s.startsWith('"') ? (JSON.parse(s) as string) : Number(s));
  const first = /^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?\d{1,15}|"[^"\\]{0,200}")\s*,/.exec(head);
  if (first) return parse(first[1]);
  const last = /,\s*"id"\s*:\s*(-?\d{1,15}|"[^"\\]{0,200}")\s*\}\s*$/.exec(tail);
  return parse(last?.[1]);
}

export class CappedReadBuffer {
  private chunks: Buffer[] = [];
  private size = 0;
  private skipping: { head: Buffer; tail: Buffer; bytes: number } | undefined;
  private items: Item[] = [];

  constructor(
    private readonly maxLineBytes: number,
    /** A line too long was dropped and no request id could be read from it. */
    private readonly onOversized: (bytes: number) => void,
  ) {}

  append(chunk: Buffer): void {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(10, start);
      this.take(nl === -1 ? chunk.subarray(start) : chunk.subarray(start, nl));
      if (nl === -1) return;
      this.endLine();
      start = nl + 1;
    }
  }

  readMessage(): JSONRPCMessage | null {
    const item = this.items.shift();
    if (!item) return null;
    if ('message' in item) return item.message;
    return deserializeMessage(item.line.toString('utf8').replace(/\r$/, ''));
  }

  clear(): void {
    this.chunks = [];
    this.size = 0;
    this.skipping = undefined;
    this.items = [];
  }

  private take(piece: Buffer): void {
    if (piece.length === 0) return;
    if (this.skipping) {
      const s = this.skipping;
      s.bytes += piece.length;
      s.tail = piece.length >= ENDS ? Buffer.from(piece.subarray(piece.length - ENDS)) : Buffer.concat([s.tail, piece]).subarray(-ENDS);
      return;
    }
    this.chunks.push(piece);
    this.size += piece.length;
    if (this.size <= this.maxLineBytes) return;
    const all = Buffer.concat(this.chunks);
    this.skipping = { head: Buffer.from(all.subarray(0, ENDS)), tail: Buffer.from(all.subarray(-ENDS)), bytes: all.length };
    this.chunks = [];
    this.size = 0;
  }

  private endLine(): void {
    const s = this.skipping;
    if (!s) {
      if (this.size > 0) this.items.push({ line: this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks) });
      this.chunks = [];
      this.size = 0;
      return;
    }
    this.skipping = undefined;
    const id = idAtEnds(s.head.toString('utf8'), s.tail.toString('utf8'));
    if (id === undefined) return this.onOversized(s.bytes);
    this.items.push({
      message: { jsonrpc: '2.0', id, error: { code: RESULT_TOO_LARGE_RPC_CODE, message: `the answer was ${s.bytes} bytes, more than the ${this.maxLineBytes} a message may be`, data: { bridle: 'MCP_RESULT_TOO_LARGE', bytes: s.bytes } } },
    });
  }
}
