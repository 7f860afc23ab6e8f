/**
 * The in-process wire fake (`wire-fake.ts`) behind a real loopback HTTP server (an ephemeral port), for
 * what should pay for the socket too: the per-step benchmark of each provider. The SDK then uses the real
 * `fetch`; the frames are the same.
 */
import { createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { ModelRequest } from '../../log/messages.js';
import type { ModelProvider } from '../../ports/model.js';
import { providerFor, wireFetch, type Wire } from './wire-fake.js';

export interface ServedWireModel {
  model: ModelProvider;
  /** `http://127.0.0.1:PORT` (the provider gets the path its SDK expects). */
  url: string;
  close(): Promise<void>;
}

/** Contract: listens before resolving; `close` ends every open connection. */
export async function serveWireModel(wire: Wire, inner: ModelProvider): Promise<ServedWireModel> {
  let current: ModelRequest | undefined;
  const answer = wireFetch(wire, (_body, signal) => inner.stream(current!, signal), []);
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (p: Buffer) => parts.push(p));
    req.on('end', () => {
      const ac = new AbortController();
      res.on('close', () => !res.writableFinished && ac.abort());
      void (async () => {
        try {
          const r = await answer('', { body: Buffer.concat(parts).toString('utf8'), signal: ac.signal });
          res.writeHead(r.status, Object.fromEntries(r.headers));
          if (r.body) for await (const part of r.body) res.write(part);
          res.end();
        } catch {
          // A dropped connection, as the fake's cut streams mean it.
          res.socket?.destroy();
        }
      })();
    });
  });
  server.on('connection', (s) => (sockets.add(s), s.on('close', () => sockets.delete(s))));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const model = providerFor(wire, inner, { baseURL: wire === 'anthropic' ? url : `${url}/v1`, onRequest: (r) => void (current = r) });
  return {
    model,
    url,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
