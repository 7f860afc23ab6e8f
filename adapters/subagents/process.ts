/**
 * The `process` subagent provider: the child is another `bridle` process,
 * `bridle serve` on a free loopback port with a token of its own, driven
 * over its JSON-RPC protocol (docs/protocol.md). Its log is still a bridle
 * log: the child server writes it in the parent's `$BRIDLE_HOME/sessions`,
 * under the id, depth and parent the delegation gives it (`session/create`),
 * so the parent's `subagent/start` names it and `bridle resume` of the
 * parent finds it. What is pinned crosses as flags: approval `never`, the
 * depth limit, the parent's sandbox as it is at spawn, what is left of the
 * tree's budget. The child's product is otherwise its own (its flags, the
 * home's config): `args` adds flags. Its model is the row's `model`, else the
 * delegating row's, as for an in-process child (ADR 0077) — a model id
 * crosses as `--model`, a whole model row as a `--patch` file of its own —
 * else, with no `args`, the parent's.
 * The child server exits when its stdin ends, so a parent that dies — even
 * killed — takes it down.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { Entry, type EntryOf } from '../../log/entries.js';
import { MODEL, SANDBOX, SESSION, SUBAGENT, SUBAGENTS } from '../../ports/index.js';
import { defineProvider } from '../../ports/provider.js';
import type { ServiceLookup } from '../../ports/service.js';
import type { ChildModel, ChildOutcome, ChildRequest, ChildSession, SubagentProvider } from '../../ports/subagents.js';
import { ChildModelConfig } from '../../plugins/rows.js';
import { connectRpc, type RpcChannel } from './rpc-client.js';

/** This package's own CLI, beside this file once built (`dist/adapters/subagents/` → `dist/cli/main.js`). */
const OWN_CLI = fileURLToPath(new URL('../../cli/main.js', import.meta.url));

export const ProcessConfig = z.strictObject({
  /** The `bridle` CLI to run (its `main.js`), under this Node; default: this package's own. */
  bridle: z.string().min(1).optional(),
  /** The model the child runs on (ADR 0077): a model id as `--model` takes it, or its whole `model` row; default: the delegating row's, else the parent's. */
  model: ChildModelConfig.optional(),
  /** More flags for the child's `bridle serve` (e.g. `--patch child.yaml`); without them and without a `model`, `--model` of the parent's model. */
  args: z.array(z.string()).optional(),
  /** How long the child may take to start listening. */
  startTimeoutMs: z.int().positive().default(30_000),
  /** The deepest child depth it advertises. */
  maxDepth: z.int().min(1).max(8).optional(),
});
export type ProcessConfig = z.infer<typeof ProcessConfig>;

/** The flags that pin what a delegated child may do, whatever its own product says. */
function pinnedFlags(services: ServiceLookup, req: ChildRequest): string[] {
  const session = services.get(SESSION);
  const registry = services.get(SUBAGENTS);
  const sandbox = services.get(SANDBOX);
  const out = ['--cwd', session.cwd, '--approval', 'never', '--max-depth', String(registry.maxDepth)];
  if (!sandbox.provider.confines) out.push('--sandbox', 'off');
  else out.push('--sandbox', 'bwrap', '--sandbox-mode', sandbox.policy.mode, sandbox.policy.network ? '--allow-network' : '--no-allow-network');
  const b = registry.budget;
  if (b) {
    const left = [
      b.limit.steps !== undefined ? `steps=${Math.max(1, b.limit.steps - b.used.steps)}` : '',
      b.limit.tokens !== undefined ? `tokens=${Math.max(1, b.limit.tokens - b.used.tokens)}` : '',
    ].filter(Boolean);
    if (left.length) out.push('--tree-budget', left.join(','));
  }
  // What is left of the parent's own cap: the child's `session/start` records it with the prices it counts at.
  const cap = req.budget;
  const parts = [cap?.tokens !== undefined ? `tokens=${Math.max(1, Math.floor(cap.tokens))}` : '', cap?.usd !== undefined ? `usd=${Math.max(0.000001, cap.usd).toFixed(6)}` : ''].filter(Boolean);
  if (parts.length) out.push('--budget', parts.join(','));
  return out;
}

/** The parent's model as flags: its name, and the base URL it reaches it at (the child's wire is its own product's). */
function parentModelFlags(services: ServiceLookup, name?: string): string[] {
  const m = services.get(MODEL) as { name?: string; id: string; baseURL?: string };
  const id = name ?? m.name ?? m.id;
  return [...(id ? ['--model', id] : []), ...(m.baseURL ? ['--base-url', m.baseURL] : [])];
}

/**
 * The flags that put the child on `model`: an id as `--model`, a whole row as a patch file in a directory of
 * its own (mode 0700, removed with the child). Contract: throws for a row whose module path is not absolute
 * (the CLI anchors one at the file that names it; nothing could anchor it in the child).
 */
function childModelFlags(model: ChildModel, services: ServiceLookup, files: string[]): string[] {
  if (typeof model === 'string') return parentModelFlags(services, model);
  if (isRelativeModule(model.use)) throw new Error(`the process provider's child model row names module ${model.use}, which is not an absolute path`);
  const dir = mkdtempSync(join(tmpdir(), 'bridle-child-model-'));
  const file = join(dir, 'model.json');
  writeFileSync(file, JSON.stringify({ patch: [{ id: 'model', ...model }] }), { mode: 0o600 });
  files.push(dir);
  return ['--patch', file];
}
const isRelativeModule = (use: string) => use.startsWith('./') || use.startsWith('../');

/** Waits for the server's first stdout line (`bridle serve: ws://…`). Contract: rejects with what the child said when it exits or takes too long. */
function listening(proc: ChildProcess, ms: number, signal: AbortSignal, stderr: () => string): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    const fail = (why: string) => (cleanup(), reject(new Error(`${why}${stderr() ? `: ${stderr().trim().split('\n').slice(-3).join(' | ')}` : ''}`)));
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = /bridle serve: (ws:\/\/\S+)/.exec(out);
      if (m) (cleanup(), resolve(m[1]!));
    };
    const onExit = (code: number | null, sig: string | null) => fail(`the child bridle exited before it listened (${sig ?? `exit ${code}`})`);
    const onAbort = () => fail('cancelled while the child bridle started');
    const timer = setTimeout(() => fail(`the child bridle did not listen within ${ms} ms`), ms);
    const cleanup = () => {
      clearTimeout(timer);
      proc.stdout!.off('data', onData);
      proc.off('exit', onExit);
      signal.removeEventListener('abort', onAbort);
    };
    proc.stdout!.on('data', onData);
    proc.once('exit', onExit);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

async function openProcessChild(c: ProcessConfig, services: ServiceLookup, req: ChildRequest): Promise<ChildSession> {
  if (req.scoped?.length) throw new Error(`the process provider cannot give its child a tool of this process (${req.scoped.map((t) => t.name).join(', ')})`);
  const session = services.get(SESSION);
  const token = randomBytes(24).toString('base64url');
  const model = c.model ?? req.model;
  const files: string[] = [];
  const own = model !== undefined ? [...childModelFlags(model, services, files), ...(c.args ?? [])] : (c.args ?? parentModelFlags(services));
  const args = [c.bridle ?? OWN_CLI, 'serve', '--port', '0', '--exit-with-stdin', '--idle-timeout', '0', ...pinnedFlags(services, req), ...own];
  const proc = spawn(process.execPath, args, { env: { ...process.env, BRIDLE_HOME: session.bridleHome, BRIDLE_TOKEN: token }, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  proc.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-8192)));
  proc.stdout!.resume();
  const exited = new Promise<string>((resolve) => proc.once('exit', (code, sig) => resolve(sig ?? `exit ${code}`)));
  void exited.then(() => files.forEach((d) => rmSync(d, { recursive: true, force: true })));
  const kill = () => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
  };
  let child: ReturnType<typeof driveOverRpc>;
  try {
    const url = await listening(proc, c.startTimeoutMs, req.signal, () => stderr);
    const rpc = await connectRpc(url, token);
    const { sessionId } = await rpc.call<{ sessionId: string }>('session/create', { id: req.id, depth: req.depth, parent: req.parent, ...(req.traceparent ? { traceparent: req.traceparent } : {}) });
    // Heard before the attach: the server sends the backlog right behind its answer, often in the same read, and a
    // notification that arrives before anyone listens is dropped (the child's `session/start` was, now and then).
    child = driveOverRpc(rpc, sessionId, { location: join(session.bridleHome, 'sessions', `${req.id}.jsonl`), proc, exited, kill, budget: services.get(SUBAGENTS).budget });
    await rpc.call('session/attach', { sessionId });
  } catch (err) {
    kill();
    throw err;
  }
  // Its `session/start` is here before the parent's `subagent/start` is written: that names the model it runs (ADR 0077).
  try {
    await child.started(c.startTimeoutMs);
  } catch (err) {
    kill();
    throw err;
  }
  return child;
}

/** A child session on the far side of a JSON-RPC connection, as the parent drives it. */
function driveOverRpc(rpc: RpcChannel, id: string, o: { location: string; proc: ChildProcess; exited: Promise<string>; kill: () => void; budget?: import('../../ports/subagents.js').TreeBudget }): ChildSession & { started(ms: number): Promise<void> } {
  const entries: Entry[] = [];
  let gone: string | undefined;
  const waiters = new Set<() => void>();
  const wake = () => waiters.forEach((f) => f());
  rpc.onNotification((method, params) => {
    if (method !== 'session/entry' || params.sessionId !== id) return;
    const e = Entry.safeParse(params.entry);
    if (!e.success) return;
    entries.push(e.data);
    o.budget?.draw(e.data);
    wake();
  });
  rpc.onClose((why) => ((gone ??= `the connection to the child bridle ended (${why})`), wake()));
  void o.exited.then((how) => ((gone ??= `the child bridle process exited (${how})`), wake()));
  const ends = () => entries.filter((e) => e.kind === 'turn/end').length;
  /** Resolves with the turn/end after the `n`th; rejects if the child goes away first. */
  const turnEnd = (n: number) =>
    new Promise<EntryOf<'turn/end'>>((resolve, reject) => {
      const check = () => {
        const all = entries.filter((e): e is EntryOf<'turn/end'> => e.kind === 'turn/end');
        if (all.length > n) return (waiters.delete(check), resolve(all[n]!));
        if (gone) return (waiters.delete(check), reject(new Error(gone)));
      };
      waiters.add(check);
      check();
    });
  /** Resolves once the child's `session/start` has arrived; rejects if the child goes away or takes longer than `ms`. */
  const started = (ms: number) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => (waiters.delete(check), reject(new Error(`the child bridle sent no session/start within ${ms} ms`))), ms);
      const done = (f: () => void) => (clearTimeout(timer), waiters.delete(check), f());
      const check = () => {
        if (entries.some((e) => e.kind === 'session/start')) return done(resolve);
        if (gone) return done(() => reject(new Error(gone)));
      };
      waiters.add(check);
      check();
    });
  let closing: Promise<void> | undefined;
  return {
    id,
    started,
    location: o.location,
    entries: () => entries,
    // Resolves once the child's server has saved it (its `session/input` answer, ADR 0021).
    send: (text, mode) => rpc.call('session/input', { sessionId: id, text, mode }).then(() => undefined),
    async run(text): Promise<ChildOutcome> {
      const n = ends();
      await rpc.call('session/input', { sessionId: id, text, mode: 'followup' });
      const end = await turnEnd(n);
      return { reason: end.reason, ...(end.code ? { code: end.code } : {}), ...(end.cause ? { cause: end.cause } : {}) };
    },
    async cancel() {
      const n = ends();
      const open = entries.filter((e) => e.kind === 'turn/start').length > n;
      await rpc.call('session/cancel', { sessionId: id }).catch(() => undefined);
      if (open) await turnEnd(n).catch(() => undefined);
    },
    close: () =>
      (closing ??= (async () => {
        await rpc.call('session/close', { sessionId: id }).catch(() => undefined);
        rpc.close();
        o.proc.stdin?.end();
        const t = setTimeout(o.kill, 10_000);
        await o.exited;
        clearTimeout(t);
      })()),
  };
}

export const processSubagents = defineProvider({
  seam: SUBAGENT,
  name: 'process',
  config: ProcessConfig,
  inject: [SESSION, SUBAGENTS, SANDBOX, MODEL],
  create: (c, services): SubagentProvider => ({
    name: 'process',
    // Its child is a product of its own flags: it cannot narrow the child's tools to a filter.
    advertised: { ...(c.maxDepth !== undefined ? { maxDepth: c.maxDepth } : {}), filters: false },
    open: (req) => openProcessChild(c, services, req),
  }),
});
