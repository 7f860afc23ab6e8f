/**
 * Fan-out across workers (issue #14 item 6, ADR 0030): two `bridle serve`
 * workers in this process on one Postgres store; a session created and run on
 * A, one client attached on A and one on B. Per entry, the latency is the time
 * B's client receives it after A's client did — what relaying through the
 * store (commit, NOTIFY, a read by seq, the send) adds for a client attached
 * to another worker. A lost, repeated or reordered entry on B fails the
 * benchmark instead of being timed. The live chunks (`session/delta`, ADR
 * 0035) are timed the same way, matched by position; they are best effort, so
 * the ones B never got are counted instead (their latency is then not given).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { startServe } from '../cli/serve.js';
import { composeProduct } from '../cli/settings.js';
import { closeBuses } from '../adapters/store/postgres-workers.js';
import { RpcClient } from '../test/helpers/rpc-client.js';
import { median, percentile } from './stats.js';

const quiet = () => new Writable({ write: (_c, _e, cb) => cb() });

/**
 * Two `bridle serve` workers in this process on one store, composed from `flags` with `$BRIDLE_HOME` in `root`,
 * and a client on each; `run` gets the clients. Everything is stopped, the environment put back and `root`
 * removed afterwards, whatever `run` did.
 */
async function withTwoWorkers<T>(root: string, flags: Record<string, string>, run: (ca: RpcClient, cb: RpcClient) => Promise<T>): Promise<T> {
  const env = { ...process.env, BRIDLE_HOME: join(root, 'home'), BRIDLE_TOKEN: 'bench-token' };
  const saved = { home: process.env.BRIDLE_HOME, token: process.env.BRIDLE_TOKEN };
  process.env.BRIDLE_HOME = env.BRIDLE_HOME;
  process.env.BRIDLE_TOKEN = env.BRIDLE_TOKEN;
  const started: Awaited<ReturnType<typeof startServe>>[] = [];
  const clients: RpcClient[] = [];
  try {
    const product = await composeProduct(flags, { env });
    for (let i = 0; i < 2; i++) started.push(await startServe(product, flags, quiet(), quiet()));
    for (const w of started) clients.push(await RpcClient.connect(w.server.url, { token: 'bench-token' }));
    return await run(clients[0]!, clients[1]!);
  } finally {
    for (const c of clients) c.close();
    for (const w of started) await w.server.close();
    await closeBuses();
    if (saved.home === undefined) delete process.env.BRIDLE_HOME;
    else process.env.BRIDLE_HOME = saved.home;
    if (saved.token === undefined) delete process.env.BRIDLE_TOKEN;
    else process.env.BRIDLE_TOKEN = saved.token;
    rmSync(root, { recursive: true, force: true });
  }
}

export async function crossWorkerFanout(
  url: string,
  o: { turns?: number; steps?: number } = {},
): Promise<{ entries: number; p50Ms: number; p99Ms: number; sameWorkerTurnMs: number; liveChunks: number; liveLost: number; liveTimed: number; liveP50Ms: number; liveP99Ms: number }> {
  const turns = o.turns ?? 3;
  const steps = o.steps ?? 20;
  const root = mkdtempSync(join(tmpdir(), 'bridle-bench-workers-'));
  const ws = join(root, 'ws');
  mkdirSync(ws);
  writeFileSync(join(ws, 'x.txt'), 'x\n');
  const responses = [];
  for (let t = 0; t < turns; t++) {
    for (let i = 0; i < steps - 1; i++) responses.push({ toolCalls: [{ name: 'read_file', arguments: { path: 'x.txt' } }] });
    responses.push({ text: `turn ${t} done` });
  }
  writeFileSync(join(root, 'script.json'), JSON.stringify({ responses }));
  const flags = { store: url, model: `scripted:${join(root, 'script.json')}`, approval: 'auto', sandbox: 'off', cwd: ws, port: '0', maxSteps: String(steps + 1) };
  return withTwoWorkers(root, flags, async (ca, cb) => {
    const seenA = new Map<number, bigint>();
    const seenB = new Map<number, bigint>();
    // Live chunks (ADR 0035) by step, in the order each client got them: not logged, so matched by their place in
    // their step. A relay drops the chunks of a step whose message it has read, so a step may reach B short.
    const liveA = new Map<string, bigint[]>();
    const liveB = new Map<string, bigint[]>();
    const got = (live: Map<string, bigint[]>, step: string) => {
      const at = live.get(step);
      if (at) at.push(process.hrtime.bigint());
      else live.set(step, [process.hrtime.bigint()]);
    };
    let lastB = 0;
    let problem: string | undefined;
    ca.ws.on('message', (d) => {
      const m = JSON.parse(d.toString()) as { method?: string; params?: { entry?: { seq: number }; step?: string } };
      if (m.method === 'session/entry') seenA.set(m.params!.entry!.seq, process.hrtime.bigint());
      else if (m.method === 'session/delta') got(liveA, m.params!.step!);
    });
    cb.ws.on('message', (d) => {
      const m = JSON.parse(d.toString()) as { method?: string; params?: { entry?: { seq: number }; step?: string } };
      if (m.method === 'session/delta') got(liveB, m.params!.step!);
      if (m.method !== 'session/entry') return;
      const seq = m.params!.entry!.seq;
      if (seq !== lastB + 1) problem ??= `worker B's client expected seq ${lastB + 1}, got ${seq}`;
      lastB = seq;
      seenB.set(seq, process.hrtime.bigint());
    });
    const { sessionId } = await ca.call('session/create', {});
    await ca.call('session/attach', { sessionId });
    await cb.call('session/attach', { sessionId });
    const turnMs: number[] = [];
    for (let t = 0; t < turns; t++) {
      const t0 = process.hrtime.bigint();
      const { seq } = await ca.call('session/input', { sessionId, text: `turn ${t}` });
      const end = await ca.waitFor((m) => m.method === 'session/entry' && m.params.entry.kind === 'checkpoint' && m.params.entry.seq > seq, 60_000, 'the turn on A');
      turnMs.push(Number(process.hrtime.bigint() - t0) / 1e6);
      await cb.waitFor((m) => m.method === 'session/entry' && m.params.entry.seq === end.params.entry.seq, 10_000, 'the turn on B');
    }
    if (problem) throw new Error(`cross-worker fan-out: ${problem}`);
    const lat: number[] = [];
    for (const [seq, at] of seenA) {
      const atB = seenB.get(seq);
      if (atB === undefined) throw new Error(`cross-worker fan-out: worker B's client never got seq ${seq}`);
      lat.push(Number(atB - at) / 1e6);
    }
    // The last chunks may still be on their way to B (gathered for DELTA_BATCH_MS before they are sent).
    const count = (live: Map<string, bigint[]>) => [...live.values()].reduce((n, at) => n + at.length, 0);
    for (let i = 0; count(liveB) < count(liveA) && i < 100; i++) await new Promise((r) => setTimeout(r, 10));
    // The latency of the steps that reached B whole; a short step's chunks are lost, not matched by guess.
    const live: number[] = [];
    for (const [step, atA] of liveA) {
      const atB = liveB.get(step);
      if (atB?.length === atA.length) atA.forEach((at, i) => live.push(Number(atB[i]! - at) / 1e6));
    }
    const ms = (xs: number[], p: number) => (xs.length ? Number(percentile(xs, p).toFixed(2)) : Number.NaN);
    return {
      entries: lat.length,
      p50Ms: ms(lat, 50),
      p99Ms: ms(lat, 99),
      sameWorkerTurnMs: Math.round(median(turnMs)),
      liveChunks: count(liveA),
      liveLost: count(liveA) - count(liveB),
      liveTimed: live.length,
      liveP50Ms: ms(live, 50),
      liveP99Ms: ms(live, 99),
    };
  });
}

/**
 * Forwarded answers and cancels (ADR 0032): two `bridle serve` workers in this process on one Postgres store,
 * `--approval ask`, a session run on A with a client attached on each. Per round, the time from sending to the
 * response: `approval/respond` on A (the desk, local), on B (forwarded through the inbox, answered once A has
 * logged `approval/decided`), and `session/cancel` on B during an open question (answered once A has logged
 * `session/cancel`).
 */
export async function forwardedRoundTrips(url: string, o: { rounds?: number } = {}): Promise<{ rounds: number; answerLocalMs: number; answerForwardedMs: number; cancelForwardedMs: number }> {
  const rounds = o.rounds ?? 10;
  const root = mkdtempSync(join(tmpdir(), 'bridle-bench-forward-'));
  const ws = join(root, 'ws');
  mkdirSync(ws);
  const ask = { toolCalls: [{ name: 'bash', arguments: { command: 'true' } }] };
  const responses = [];
  // Answer rounds take the call and a closing text; cancel rounds end at the question.
  for (let i = 0; i < 2 * rounds; i++) responses.push(ask, { text: 'ok' });
  for (let i = 0; i < rounds; i++) responses.push(ask);
  writeFileSync(join(root, 'script.json'), JSON.stringify({ responses }));
  const flags = { store: url, model: `scripted:${join(root, 'script.json')}`, approval: 'ask', sandbox: 'off', cwd: ws, port: '0' };
  return withTwoWorkers(root, flags, async (ca, cb) => {
    const { sessionId } = await ca.call('session/create', {});
    await ca.call('session/attach', { sessionId });
    await cb.call('session/attach', { sessionId });
    const asked = new Set<string>();
    const question = async () => {
      const q = await cb.waitFor((m) => m.method === 'approval/request' && !asked.has(m.params.callId), 10_000, 'the question on B');
      await ca.waitFor((m) => m.method === 'approval/request' && m.params.callId === q.params.callId, 10_000, 'the question on A');
      asked.add(q.params.callId);
      return q.params.callId as string;
    };
    const turnEnd = (after: number) => ca.waitFor((m) => m.method === 'session/entry' && m.params.entry.kind === 'checkpoint' && m.params.entry.seq > after, 10_000, 'the turn to end');
    const timed = async (f: () => Promise<unknown>) => {
      const t0 = process.hrtime.bigint();
      await f();
      return Number(process.hrtime.bigint() - t0) / 1e6;
    };
    const local: number[] = [];
    const forwarded: number[] = [];
    const cancels: number[] = [];
    for (let i = 0; i < 2 * rounds; i++) {
      const { seq } = await ca.call('session/input', { sessionId, text: `round ${i}` });
      const callId = await question();
      const via = i % 2 === 0 ? ca : cb;
      (i % 2 === 0 ? local : forwarded).push(await timed(() => via.call('approval/respond', { sessionId, callId, outcome: 'allowed-once' })));
      await turnEnd(seq);
    }
    for (let i = 0; i < rounds; i++) {
      const { seq } = await ca.call('session/input', { sessionId, text: `cancel ${i}` });
      await question();
      cancels.push(await timed(() => cb.call('session/cancel', { sessionId })));
      await turnEnd(seq);
    }
    const med = (xs: number[]) => Number(median(xs).toFixed(1));
    return { rounds, answerLocalMs: med(local), answerForwardedMs: med(forwarded), cancelForwardedMs: med(cancels) };
  });
}
