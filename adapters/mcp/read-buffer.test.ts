import { describe, expect, it } from 'vitest';
import { CappedReadBuffer, idAtEnds, RESULT_TOO_LARGE_RPC_CODE } from './read-buffer.js';

const drain = (b: CappedReadBuffer) => {
  const out: unknown[] = [];
  for (let m = b.readMessage(); m !== null; m = b.readMessage()) out.push(m);
  return out;
};

describe('the capped stdio read buffer', () => {
  it('passes lines under the cap through, whatever the chunks, and a line that is not JSON-RPC throws as the SDK\'s does', () => {
    const b = new CappedReadBuffer(100, () => undefined);
    b.append(Buffer.from('{"jsonrpc":"2.0","id":1,"res'));
    b.append(Buffer.from('ult":{}}\r\n{"jsonrpc":"2.0","method":"x"}\n{"json'));
    expect(drain(b)).toEqual([{ jsonrpc: '2.0', id: 1, result: {} }, { jsonrpc: '2.0', method: 'x' }]);
    b.append(Buffer.from('rpc":"2.0","id":2,"result":{}}\n'));
    expect(drain(b)).toEqual([{ jsonrpc: '2.0', id: 2, result: {} }]);
    b.append(Buffer.from('not json\n'));
    expect(() => b.readMessage()).toThrow();
  });

  it('answers a line past the cap with an error for the same id, its size counted, and goes on with the next line', () => {
    const b = new CappedReadBuffer(64, () => undefined);
    const huge = `{"result":{"text":"${'x'.repeat(500)}"},"jsonrpc":"2.0","id":"r-7"}`;
    for (let i = 0; i < huge.length; i += 37) b.append(Buffer.from(huge.slice(i, i + 37)));
    b.append(Buffer.from('\n{"jsonrpc":"2.0","id":8,"result":{}}\n'));
    expect(drain(b)).toEqual([
      { jsonrpc: '2.0', id: 'r-7', error: { code: RESULT_TOO_LARGE_RPC_CODE, message: `the answer was ${huge.length} bytes, more than the 64 a message may be`, data: { bridle: 'MCP_RESULT_TOO_LARGE', bytes: huge.length } } },
      { jsonrpc: '2.0', id: 8, result: {} },
    ]);
  });

  it('says so when a line past the cap names no request', () => {
    const sizes: number[] = [];
    const b = new CappedReadBuffer(10, (n) => sizes.push(n));
    const line = `{"jsonrpc":"2.0","method":"notifications/message","params":"${'y'.repeat(50)}"}`;
    b.append(Buffer.from(`${line}\n`));
    expect(drain(b)).toEqual([]);
    expect(sizes).toEqual([line.length]);
  });

  it('reads the id only where serializers put it: first (after jsonrpc) or last, never inside the content', () => {
    expect(idAtEnds('{"jsonrpc":"2.0","id":3,"result":{"x', '')).toBe(3);
    expect(idAtEnds('{"id":"a","result"', '')).toBe('a');
    expect(idAtEnds('{"result":{"content', 'ing"}]},"jsonrpc":"2.0","id":12}')).toBe(12);
    expect(idAtEnds('{"result":{"id":5,"x', 'xxxx"}}')).toBeUndefined();
    expect(idAtEnds('{"result":{"x', '"id":5}')).toBeUndefined();
  });
});
