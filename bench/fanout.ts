/**
 * WebSocket fan-out (docs/design.md §8): 100 clients attached to one session each
 * receive every entry of a turn, in order, none lost. The time is from the
 * input to the last client holding the turn's last entry; a lost, repeated or
 * reordered entry fails the benchmark instead of being timed.
 */
import { WebSocket } from 'ws';
import { startTestServer } from '../test/helpers/test-server.js';
import { median } from './stats.js';

export interface FanoutOptions {
  clients?: number;
  turns?: number;
}

interface Feed {
  ws: WebSocket;
  last: number;
  problem?: string;
  onSeq?: () => void;
  replies: Map<number, () => void>;
}

function connect(url: string, token: string, sessionId: string): Promise<Feed> {
  const ws = new WebSocket(url, { headers: { authorization: `Bearer ${token}` } });
  const feed: Feed = { ws, last: 0, replies: new Map() };
  ws.on('message', (data) => {
    const m = JSON.parse(data.toString()) as { id?: number; method?: string; params?: { entry?: { seq: number } } };
    if (typeof m.id === 'number') feed.replies.get(m.id)?.();
    if (m.method !== 'session/entry') return;
    const seq = m.params!.entry!.seq;
    if (seq !== feed.last + 1) feed.problem ??= `expected seq ${feed.last + 1}, got ${seq}`;
    feed.last = seq;
    feed.onSeq?.();
  });
  return new Promise((resolve, reject) => {
    ws.once('error', reject);
    ws.once('open', () => {
      ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'session/attach', params: { sessionId } }));
      resolve(feed);
    });
  });
}

const reach = (f: Feed, seq: number) =>
  new Promise<void>((resolve) => {
    if (f.last >= seq) return resolve();
    f.onSeq = () => {
      if (f.last >= seq) {
        f.onSeq = undefined;
        resolve();
      }
    };
  });

/** Contract: resolves with the median over `turns` turns; rejects if any client lost, repeated or reordered an entry. */
export async function benchFanout(o: FanoutOptions = {}): Promise<{ clients: number; entries: number; medianMs: number }> {
  const clients = o.clients ?? 100;
  const turns = o.turns ?? 5;
  const t = await startTestServer((_req, i) =>
    i % 2 === 0 ? { text: 'Looking.', toolCalls: [{ name: 'list_dir', arguments: {} }, { name: 'glob', arguments: { pattern: '*' } }] } : { text: 'Nothing here yet.' },
  );
  const feeds: Feed[] = [];
  try {
    const owner = await connect(t.server.url, t.token, '');
    owner.ws.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'session/create', params: {} }));
    const sessionId = await new Promise<string>((resolve) =>
      owner.ws.on('message', (d) => {
        const m = JSON.parse(d.toString()) as { id?: number; result?: { sessionId: string } };
        if (m.id === 2) resolve(m.result!.sessionId);
      }),
    );
    owner.ws.close();
    for (let i = 0; i < clients; i++) feeds.push(await connect(t.server.url, t.token, sessionId));
    const session = t.sessions[0]!;
    await Promise.all(feeds.map((f) => reach(f, session.recorder.lastSeq)));
    const times: number[] = [];
    let entries = 0;
    for (let k = 0; k < turns; k++) {
      const before = session.recorder.lastSeq;
      const started = performance.now();
      const accepted = new Promise<void>((r) => feeds[0]!.replies.set(100 + k, r));
      feeds[0]!.ws.send(JSON.stringify({ jsonrpc: '2.0', id: 100 + k, method: 'session/input', params: { sessionId, text: `turn ${k}` } }));
      await accepted;
      // The turn's last entry is its checkpoint, written when the session is idle again.
      await session.idle();
      const last = session.recorder.lastSeq;
      await Promise.all(feeds.map((f) => reach(f, last)));
      times.push(performance.now() - started);
      entries = last - before;
      const bad = feeds.find((f) => f.problem || f.last !== last);
      if (bad) throw new Error(`fan-out lost or reordered an entry: ${bad.problem ?? `stopped at ${bad.last} of ${last}`}`);
    }
    return { clients, entries, medianMs: median(times) };
  } finally {
    for (const f of feeds) f.ws.close();
    await t.stop();
  }
}

/** The hook `bench/run.ts` looks for. */
export async function bench(): Promise<{ label: string; value: Record<string, unknown> }> {
  const r = await benchFanout();
  return { label: 'WebSocket fan-out (100 clients, every entry of a turn, in order, none lost)', value: { ...r, medianMs: Number(r.medianMs.toFixed(2)) } };
}
