import { describe, expect, it } from 'vitest';
import { ErrorCode, RpcFailure } from './protocol.js';
import { parseFrame, runFrame } from './rpc.js';

const run = (text: string, handle = async (m: string, p: unknown) => ({ m, p })) => runFrame(parseFrame(text), handle);
const err = (x: unknown) => (x as { error: { code: number; message: string; data?: unknown }; id: unknown });

describe('JSON-RPC framing', () => {
  it('answers bad JSON with -32700 and id null', async () => {
    const out = err(await run('{"jsonrpc": "2.0", "method":'));
    expect(out.error.code).toBe(ErrorCode.ParseError);
    expect(out.id).toBeNull();
  });

  it('answers a non-request with -32600, keeping a usable id', async () => {
    expect(err(await run('42')).error.code).toBe(ErrorCode.InvalidRequest);
    expect(err(await run('"hello"')).error.code).toBe(ErrorCode.InvalidRequest);
    const noVersion = err(await run('{"id": 7, "method": "session/list"}'));
    expect(noVersion.error.code).toBe(ErrorCode.InvalidRequest);
    expect(noVersion.id).toBe(7);
    expect(err(await run('{"jsonrpc":"2.0","id":{"x":1},"method":"session/list"}')).id).toBeNull();
    expect(err(await run('{"jsonrpc":"2.0","id":1,"method":5}')).error.code).toBe(ErrorCode.InvalidRequest);
  });

  it('answers an unknown method with -32601', async () => {
    const out = err(await run('{"jsonrpc":"2.0","id":"a","method":"session/explode"}'));
    expect(out.error.code).toBe(ErrorCode.MethodNotFound);
    expect(out.id).toBe('a');
    // Object.prototype keys are not methods.
    expect(err(await run('{"jsonrpc":"2.0","id":1,"method":"toString"}')).error.code).toBe(ErrorCode.MethodNotFound);
  });

  it('answers bad params with -32602 and the zod issues in data', async () => {
    const out = err(await run('{"jsonrpc":"2.0","id":1,"method":"session/input","params":{"sessionId":"s1","text":42}}'));
    expect(out.error.code).toBe(ErrorCode.InvalidParams);
    expect(out.error.data).toEqual([expect.objectContaining({ path: ['text'], code: 'invalid_type' })]);
    const extra = err(await run('{"jsonrpc":"2.0","id":2,"method":"session/cancel","params":{"sessionID":"s1"}}'));
    expect(extra.error.code).toBe(ErrorCode.InvalidParams);
    const byPosition = err(await run('{"jsonrpc":"2.0","id":3,"method":"session/list","params":[]}'));
    expect(byPosition.error.code).toBe(ErrorCode.InvalidParams);
    const mode = err(await run('{"jsonrpc":"2.0","id":4,"method":"session/input","params":{"sessionId":"s1","text":"x","mode":"shout"}}'));
    expect(mode.error.code).toBe(ErrorCode.InvalidParams);
  });

  it('passes parsed params to the handler and wraps its result', async () => {
    const out = await run('{"jsonrpc":"2.0","id":1,"method":"session/attach","params":{"sessionId":"s1","fromSeq":3}}');
    expect(out).toEqual({ jsonrpc: '2.0', id: 1, result: { m: 'session/attach', p: { sessionId: 's1', fromSeq: 3 } } });
    // Absent params are an empty object.
    expect(await run('{"jsonrpc":"2.0","id":2,"method":"session/list"}')).toMatchObject({ result: { p: {} } });
  });

  it('turns handler failures into error responses', async () => {
    const failing = async () => {
      throw new RpcFailure(ErrorCode.UnknownSession, 'no such session');
    };
    expect(err(await run('{"jsonrpc":"2.0","id":1,"method":"session/list"}', failing)).error).toEqual({ code: ErrorCode.UnknownSession, message: 'no such session' });
    const crashing = async () => {
      throw new TypeError('boom');
    };
    expect(err(await run('{"jsonrpc":"2.0","id":1,"method":"session/list"}', crashing)).error.code).toBe(ErrorCode.InternalError);
  });

  it('sends nothing back for notifications, even failing ones', async () => {
    expect(await run('{"jsonrpc":"2.0","method":"session/list"}')).toBeUndefined();
    expect(await run('{"jsonrpc":"2.0","method":"nope"}')).toBeUndefined();
    expect(await run('{"jsonrpc":"2.0","method":"session/input","params":{}}')).toBeUndefined();
  });

  it('answers a batch with an array, in order, without the notifications', async () => {
    const out = (await run(
      JSON.stringify([
        { jsonrpc: '2.0', id: 1, method: 'session/list' },
        { jsonrpc: '2.0', method: 'session/list' },
        { foo: 1 },
        { jsonrpc: '2.0', id: 2, method: 'nope' },
      ]),
    )) as { id: unknown; error?: { code: number } }[];
    expect(out.map((r) => [r.id, r.error?.code])).toEqual([
      [1, undefined],
      [null, ErrorCode.InvalidRequest],
      [2, ErrorCode.MethodNotFound],
    ]);
    expect(err(await run('[]')).error.code).toBe(ErrorCode.InvalidRequest);
  });
});
