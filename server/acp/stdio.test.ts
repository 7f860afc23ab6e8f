import { describe, expect, it } from 'vitest';
import { guardedStream, readLead } from './stdio.js';

const enc = new TextEncoder();

/** Feeds `chunks` to a guarded stream with a `max`-byte limit; returns what the SDK read and what was written back. */
async function run(chunks: string[], max: number) {
  const written: string[] = [];
  const output = new WritableStream<Uint8Array>({ write: (c) => void written.push(new TextDecoder().decode(c)) });
  const input = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const c of chunks) controller.enqueue(enc.encode(c));
      controller.close();
    },
  });
  const stream = guardedStream(output, input, max);
  const read: unknown[] = [];
  for await (const m of stream.readable as unknown as AsyncIterable<unknown>) read.push(m);
  await new Promise((r) => setTimeout(r, 10));
  return { read, written: written.join('').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { id: unknown; error: { code: number; data: { reason: string } } }) };
}

describe('the frame guard', () => {
  it('passes whole lines through, however they are chunked', async () => {
    const { read, written } = await run(['{"jsonrpc":"2.0","id":1,', '"method":"a"}\n{"jsonrpc":"2.0","me', 'thod":"b"}\n', '{"jsonrpc":"2.0","id":2,"method":"c"}'], 1000);
    expect(read).toEqual([{ jsonrpc: '2.0', id: 1, method: 'a' }, { jsonrpc: '2.0', method: 'b' }, { jsonrpc: '2.0', id: 2, method: 'c' }]);
    expect(written).toEqual([]);
  });

  it('answers an oversized request with -32600 and its id, and reads the next line', async () => {
    const big = `{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{"text":"${'x'.repeat(500)}"}}\n`;
    const { read, written } = await run([big.slice(0, 100), big.slice(100), '{"jsonrpc":"2.0","id":8,"method":"ok"}\n'], 200);
    expect(written).toEqual([{ jsonrpc: '2.0', id: 7, error: { code: -32600, message: 'Invalid request: message larger than 200 bytes', data: { reason: 'MESSAGE_TOO_LARGE', maxMessageBytes: 200 } } }]);
    expect(read).toEqual([{ jsonrpc: '2.0', id: 8, method: 'ok' }]);
  });

  it('an oversized line with no id it can read is answered with id null', async () => {
    const { written, read } = await run([`${'y'.repeat(300)}\n`, '{"jsonrpc":"2.0","id":1,"method":"ok"}\n'], 200);
    expect(written.map((w) => [w.id, w.error.code])).toEqual([[null, -32600]]);
    expect(read).toHaveLength(1);
  });

  it('an oversized response to one of the agent\'s requests becomes an error response for it, so nothing waits forever', async () => {
    const { read, written } = await run([`{"jsonrpc":"2.0","id":3,"result":{"content":"${'z'.repeat(400)}"}}\n`], 200);
    expect(written).toEqual([]);
    expect(read).toEqual([{ jsonrpc: '2.0', id: 3, error: { code: -32600, message: 'Invalid request: message larger than 200 bytes', data: { reason: 'MESSAGE_TOO_LARGE', maxMessageBytes: 200 } } }]);
  });

  it('reads the id that leads a frame, and only there', () => {
    expect(readLead(enc.encode('{"jsonrpc":"2.0","id":12,"method":"x"'))).toEqual({ id: 12, isResponse: false });
    expect(readLead(enc.encode('{ "id" : "a-b", "jsonrpc": "2.0", "result": {'))).toEqual({ id: 'a-b', isResponse: true });
    expect(readLead(enc.encode('{"jsonrpc":"2.0","method":"x","params":{"id":3}'))).toEqual({ id: null, isResponse: false });
    expect(readLead(enc.encode('garbage'))).toEqual({ id: null, isResponse: false });
  });
});
