/**
 * The relay as a port (ADR 0050): an embedder runs many workers on one Postgres store with the library's
 * `startServer()` alone — each given the store's relay (`createPostgresRelay`) — and a client attached to
 * one worker is served a session another worker runs, entry by entry, as a relay (ADR 0030).
 */
import { realpathSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { createPostgresRelay, createPostgresSessionStore, createScriptedProviderFromFunction, createSession, startServer, type BridleServer, type ServerOptions } from '../index.js';
import { describeWithPostgres } from '../test/helpers/postgres.js';
import { RpcClient } from '../test/helpers/rpc-client.js';
import { tempDir } from '../test/helpers/temp.js';

describeWithPostgres('many workers from the library', (db) => {
  it('the relay port through startServer() with two workers from the library: a client attached to worker A sees a session hosted by worker B', async () => {
    const root = realpathSync(tempDir('bridle-relay-port-'));
    // One store and one relay for the process's workers, as an embedder holds them.
    const store = createPostgresSessionStore({ url: db.url(), notify: true, leaseMs: 5000 });
    const relay = createPostgresRelay(store);
    const model = createScriptedProviderFromFunction(() => ({ text: 'hello from worker B' }));
    const worker = (): Promise<BridleServer> => {
      const o: ServerOptions = {
        port: 0,
        token: 't',
        relay,
        open: (_params, hooks) => createSession({ cwd: root, bridleHome: root, services: { model, store }, answerer: hooks.answerer }),
        // This embedder runs only the sessions it creates: one held elsewhere is refused by the store's claim, and so relayed.
        reopen: async (id) => {
          (await store.claim(id)).release();
          return undefined;
        },
      };
      return startServer(o);
    };
    const [a, b] = [await worker(), await worker()];
    const clients: RpcClient[] = [];
    try {
      const onB = await RpcClient.connect(b.url, { token: 't' });
      clients.push(onB);
      const { sessionId } = await onB.call<{ sessionId: string }>('session/create', {});
      await onB.call('session/attach', { sessionId });
      await onB.call('session/input', { sessionId, text: 'hi' });
      await onB.waitFor((m) => m.method === 'session/entry' && (m.params as { entry: { kind: string } }).entry.kind === 'turn/end', 20_000, "B's turn/end");

      const onA = await RpcClient.connect(a.url, { token: 't' });
      clients.push(onA);
      await onA.call('session/attach', { sessionId });
      const said = await onA.waitFor((m) => m.method === 'session/entry' && (m.params as { entry: { kind: string } }).entry.kind === 'assistant/message', 20_000, 'the relayed assistant/message');
      expect((said.params as { sessionId: string; entry: { text?: string } }).sessionId).toBe(sessionId);
      expect(JSON.stringify(said.params)).toContain('hello from worker B');
      // Worker A relays it; worker B runs it.
      expect(a.hub.list().find((s) => s.sessionId === sessionId)?.value).toBe('elsewhere');
    } finally {
      for (const c of clients) c.ws.close();
      await a.close();
      await b.close();
      await relay.close();
      rmSync(root, { recursive: true, force: true });
    }
  }, 60_000);
});
