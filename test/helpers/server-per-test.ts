/**
 * The set-up of a server e2e file, written once: one test server a test (`startTestServer`), its clients closed and
 * the server stopped after each test. Apart from `test-server.ts` because it registers vitest hooks, and the
 * benchmarks import that file outside vitest.
 */
import { afterEach } from 'vitest';
import type { ResponseFunction } from '../../adapters/model/scripted.js';
import { RpcClient } from './rpc-client.js';
import { startTestServer, type TestServer, type TestServerOptions } from './test-server.js';

export interface ServerPerTest {
  /** Starts this test's server (stopped after the test). */
  start(respond: ResponseFunction, o?: TestServerOptions): Promise<TestServer>;
  /** A client of this test's server, with its token unless `o` says otherwise (closed after the test). */
  connect(o?: Parameters<typeof RpcClient.connect>[1]): Promise<RpcClient>;
}

/** The set-up of a server e2e file: one test server a test, its clients closed and the server stopped after each (registers `afterEach`). */
export function serverPerTest(): ServerPerTest {
  let t: TestServer | undefined;
  const clients: RpcClient[] = [];
  afterEach(async () => {
    for (const c of clients.splice(0)) c.close();
    await t?.stop();
    t = undefined;
  });
  return {
    start: async (respond, o) => (t = await startTestServer(respond, o)),
    connect: async (o) => {
      if (!t) throw new Error('serverPerTest: connect before start');
      const c = await RpcClient.connect(t.server.url, o ?? { token: t.token });
      clients.push(c);
      return c;
    },
  };
}
