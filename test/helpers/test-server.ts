/**
 * A `bridle serve` for tests and benchmarks: sessions on memory stores with a
 * reactive scripted model and the real built-in tools in a temp workspace,
 * served on a free loopback port. Nothing reaches the network.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ApprovalPolicy } from '../../ports/approval.js';
import { createSession } from '../../runtime/session.js';
import type { BridleSession } from '../../runtime/bridle-session.js';
import { createScriptedProviderFromFunction, type ResponseFunction, type ScriptedOptions } from '../../adapters/model/scripted.js';
import type { CreateParams } from '../../server/hosted-session.js';
import { startServer, type BridleServer, type ServerOptions } from '../../server/server.js';
import { createMemoryStore, type MemorySessionStore } from '../../adapters/store/memory.js';
import { forkSession } from '../../runtime/logs/fork.js';
import { resumableTurn } from '../../log/resumable.js';
import { parseLog } from '../../log/parse.js';
import type { LogStore } from '../../log/store.js';
import { steppingClock } from './harness.js';
import type { Entry } from '../../log/entries.js';
import { restoreSessionSnapshot } from '../../machines/session-fold.js';
import { tempDir } from './temp.js';

export interface TestServer {
  server: BridleServer;
  token: string;
  workspace: string;
  sessions: BridleSession[];
  stop(): Promise<void>;
}

export interface TestServerOptions extends Partial<Omit<ServerOptions, 'open' | 'token'>> {
  approval?: ApprovalPolicy;
  /** The sessions' budget (ADR 0047). */
  budget?: { tokens?: number; usd?: number };
  scripted?: ScriptedOptions;
  token?: string;
  /** Runs first in every open: a test throws from it to make a create fail. */
  beforeOpen?: (params: CreateParams) => void;
  /** Each session's store (default: a memory store). */
  store?: () => LogStore;
  /** One store of every session, which `session/fork` forks in (forks are named `f1`, `f2`, …). */
  sessions?: MemorySessionStore;
  /** The first session goes on with this log (a predecessor's, left open by resume's repair), restored as resume does. */
  continueFrom?: readonly Entry[];
}

/** A fork's log, and when its turn goes on (ADR 0031), the session as it stood before that turn, as `openSession` restores it. */
const forkOpening = (existing: Entry[]) => (resumableTurn(existing) ? { existing, snapshot: restoreSessionSnapshot(existing) } : { existing });

export async function startTestServer(respond: ResponseFunction, o: TestServerOptions = {}): Promise<TestServer> {
  const root = fs.realpathSync(tempDir('bridle-srv-'));
  // A continued log runs in the workspace it logged (ADR 0041): the predecessor's, made again if its server removed it.
  const logged = o.continueFrom?.[0]?.kind === 'session/start' ? o.continueFrom[0].cwd : undefined;
  const workspace = logged ?? path.join(root, 'ws');
  const bridleHome = path.join(root, 'home');
  fs.mkdirSync(workspace, { recursive: true });
  fs.mkdirSync(bridleHome);
  const token = o.token ?? 'test-token';
  const sessions: BridleSession[] = [];
  let n = 0;
  let forks = 0;
  const all = o.sessions;
  const server = await startServer({
    ...(all
      ? {
          fork: async (p) => {
            const f = await forkSession({ store: all, session: p.sessionId, id: `f${forks + 1}`, clock: steppingClock(Date.UTC(2026, 5, 1)), ...(p.at !== undefined ? { at: p.at } : {}), ...(p.answer !== undefined ? { answer: p.answer } : {}) });
            forks++;
            return { id: f.id, forkOf: f.forkOf, open: f.open, resumable: f.open && resumableTurn(f.entries) !== undefined };
          },
        }
      : {}),
    port: 0,
    // As `bridle serve` does: clients may point sessions at the workspace or below.
    allowCwd: [workspace],
    ...o,
    token,
    open: (params, hooks) => {
      o.beforeOpen?.(params);
      const s = createSession({
        id: params.fork ?? `s${++n}`,
        ...(params.fork !== undefined && all ? forkOpening(parseLog(all.get(params.fork)!.text()).entries) : {}),
        cwd: params.cwd ?? workspace,
        bridleHome,
        settings: { approval: o.approval ?? 'auto', sandbox: 'off', ...(o.budget ? { budget: o.budget } : {}) },
        services: { model: { ...createScriptedProviderFromFunction(respond, o.scripted), name: params.model ?? 'scripted-test' }, store: all ?? o.store?.() ?? createMemoryStore(), clock: steppingClock() },
        sleep: async () => {},
        ...(o.continueFrom && n === 1 ? { existing: o.continueFrom, snapshot: restoreSessionSnapshot(o.continueFrom) } : {}),
        ...hooks,
      });
      sessions.push(s);
      return s;
    },
  });
  return {
    server,
    token,
    workspace,
    sessions,
    stop: async () => {
      await server.close();
      fs.rmSync(root, { recursive: true, force: true });
      if (logged) fs.rmSync(logged, { recursive: true, force: true });
    },
  };
}
