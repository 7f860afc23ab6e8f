/**
 * A caller that gives up on an in-place `bridle_run` call (ADR 0075) ends the
 * inner turn at once, driven by the v2 SDK's own `Client` against the built
 * CLI (`npm run build` first): the call aborted while the scripted model is
 * still answering, or while an approval question waits for the caller
 * (2026-07-28 `input_required`, 2025 `elicitation/create`), or the client's
 * connection closing mid-call, over stdio and `--http`. Each time the log
 * records `session/cancel` by the MCP client and a `turn/end` `aborted`
 * within a few seconds (a bound for a loaded machine, not a speed claim),
 * verifies, and the session is in the store: a later call continues it.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { describe, expect, it } from 'vitest';
import type { Entry } from '../../log/entries.js';
import { parseLog } from '../../log/parse.js';
import { verifyLog } from '../../log/verify.js';
import { CLI } from '../helpers/cli.js';
import { startCliServer, type CliServer } from '../helpers/cli-server.js';
import { tempDir } from '../helpers/temp.js';

/** How long the inner turn may take to end after the caller gave up: generous for a shared machine. */
const BOUND_MS = 5_000;

type Mode = 'auto' | 'legacy';
type Transport = 'stdio' | 'http';

/** A workspace, a store, and a model that either answers slowly (a minute a chunk) or asks to write a file. */
function world(kind: 'slow' | 'asks') {
  const root = realpathSync(tempDir('bridle-mcp-cancel-'));
  const home = join(root, 'home');
  const ws = join(root, 'ws');
  mkdirSync(ws);
  const script = join(root, 'script.json');
  const responses =
    kind === 'slow'
      ? [{ text: 'this takes a while to say' }, { text: 'Continued.' }]
      : [{ toolCalls: [{ name: 'write_file', arguments: { path: 'out.txt', content: 'hello\n' } }] }, { text: 'Continued.' }];
  writeFileSync(script, JSON.stringify({ label: `scripted: ${kind}`, responses }));
  const argsOf = (name: string, delay: boolean) => {
    const patch = join(root, name);
    writeFileSync(patch, JSON.stringify({ patch: [{ id: 'model', use: 'scripted', config: { file: script, ...(delay ? { delayMs: 60_000 } : {}) } }] }));
    return ['--patch', patch, '--cwd', ws, '--sandbox', 'off'];
  };
  // The same model (its name is the script's) at full speed, for the call that continues the session.
  return { home, ws, args: argsOf('patch.json', kind === 'slow'), fastArgs: argsOf('fast.json', false) };
}

interface Connected {
  client: Client;
  /** Closes the client's side of the connection (stdio: the server's stdin ends). */
  close(): Promise<void>;
  server?: CliServer;
}

type World = Pick<ReturnType<typeof world>, 'home' | 'args'>;

async function connect(t: Transport, mode: Mode, wd: World, onAsk?: () => Promise<never>): Promise<Connected> {
  const client = new Client({ name: 'quitter', version: '1.0.0' }, { versionNegotiation: { mode }, ...(onAsk ? { capabilities: { elicitation: { form: {} } } } : {}) });
  if (onAsk) client.setRequestHandler('elicitation/create', onAsk);
  if (t === 'stdio') {
    const env = { PATH: process.env.PATH!, HOME: process.env.HOME!, BRIDLE_HOME: wd.home };
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp', ...wd.args], env, stderr: 'pipe' }));
    return { client, close: () => client.close() };
  }
  const server = await startCliServer('mcp', ['--http', ...wd.args], { BRIDLE_HOME: wd.home });
  await client.connect(new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: { authorization: `Bearer ${server.token}` } } }));
  return { client, server, close: () => client.close() };
}

/** The one session log of the store, once its turn has ended, polled for up to `ms`; the last entries read when it has not. */
async function endedLog(home: string, ms: number): Promise<{ path?: string; entries: Entry[]; ended: boolean }> {
  const sessions = join(home, 'sessions');
  let path: string | undefined;
  let entries: Entry[] = [];
  for (const deadline = Date.now() + ms; Date.now() < deadline; await new Promise((r) => setTimeout(r, 50))) {
    const f = existsSync(sessions) ? readdirSync(sessions).find((n) => n.endsWith('.jsonl')) : undefined;
    if (!f) continue;
    path = join(sessions, f);
    entries = parseLog(readFileSync(path, 'utf8')).entries;
    if (entries.some((e) => e.kind === 'turn/end')) return { path, entries, ended: true };
  }
  return { ...(path ? { path } : {}), entries, ended: false };
}

const idOf = (path: string) => path.slice(path.lastIndexOf('/') + 1, -'.jsonl'.length);

/** The turn ended aborted, cancelled by the caller, within the bound; the log verifies. */
async function expectCancelled(home: string, gaveUpAt: number, by: RegExp) {
  const log = await endedLog(home, BOUND_MS + 30_000);
  const took = Date.now() - gaveUpAt;
  expect(log.ended, `no turn/end; last entry ${JSON.stringify(log.entries.at(-1))}`).toBe(true);
  expect(took, `the turn ended ${took} ms after the caller gave up`).toBeLessThan(BOUND_MS);
  expect(log.entries.find((e) => e.kind === 'session/cancel')).toMatchObject({ by: expect.stringMatching(by) });
  expect(log.entries.find((e) => e.kind === 'turn/end')).toMatchObject({ reason: 'aborted' });
  expect(verifyLog(log.entries).violations).toEqual([]);
  return log.path!;
}

/** A later call continuing the session runs its next turn. */
async function expectContinues(t: Transport, wd: ReturnType<typeof world>, path: string) {
  const c = await connect(t, 'auto', { home: wd.home, args: wd.fastArgs });
  try {
    const r = await c.client.callTool({ name: 'bridle_run', arguments: { prompt: 'Go on.', session: idOf(path) } });
    expect(r.structuredContent).toMatchObject({ sessionId: idOf(path), reason: expect.any(String) });
    const entries = parseLog(readFileSync(path, 'utf8')).entries;
    expect(entries.filter((e) => e.kind === 'turn/start')).toHaveLength(2);
    expect(verifyLog(entries).violations).toEqual([]);
  } finally {
    await c.close();
    if (c.server) await c.server.stop();
  }
}

/** The caller that gave up closes (a no-op where it already has), an HTTP server stops cleanly, and a later call continues the session. */
async function closeThenContinues(t: Transport, wd: ReturnType<typeof world>, c: Connected, path: string) {
  await c.close();
  if (c.server) expect(await c.server.stop()).toBe(0);
  await expectContinues(t, wd, path);
}

const combos: [Transport, Mode][] = [
  ['stdio', 'auto'],
  ['stdio', 'legacy'],
  ['http', 'auto'],
  ['http', 'legacy'],
];

describe('bridle mcp: a caller that gives up on an in-place call ends the inner turn at once', () => {
  for (const [t, mode] of combos) {
    const rev = mode === 'auto' ? '2026-07-28' : '2025';
    // A 2025 caller over HTTP sends its cancel as a POST of its own, matched to the running call by caller and request id (ADR 0089).
      it(`${t}, ${rev}: the call aborted while the model answers`, async () => {
      const wd = world('slow');
      const c = await connect(t, mode, wd);
      let gaveUpAt = 0;
      try {
        const stop = new AbortController();
        const call = c.client.callTool({ name: 'bridle_run', arguments: { prompt: 'Say something slowly.' } }, { signal: stop.signal, onprogress: (p) => void (p.message === 'step t1.s1' && ((gaveUpAt = Date.now()), stop.abort('the caller gave up'))) });
        await expect(call).rejects.toThrow();
        const path = await expectCancelled(wd.home, gaveUpAt, /^mcp client$/);
        await closeThenContinues(t, wd, c, path);
      } finally {
        await c.close();
        c.server?.proc.kill('SIGKILL');
      }
    }, 90_000);

    // Only a 2025 stdio caller is asked within the call: a 2026-07-28 call has been answered (`input_required`) while
    // its question waits, so there is nothing left to cancel but the question's time (#23: open).
    if (t === 'stdio' && mode === 'legacy')
      it(`${t}, ${rev}: the call aborted while its approval question waits for the caller`, async () => {
      const wd = world('asks');
      const stop = new AbortController();
      let gaveUpAt = 0;
      const c = await connect(t, mode, wd, () => ((gaveUpAt = Date.now()), stop.abort('the caller gave up'), new Promise<never>(() => undefined)));
      try {
        const call = c.client.callTool({ name: 'bridle_run', arguments: { prompt: 'Write out.txt.' } }, { signal: stop.signal });
        await expect(call).rejects.toThrow();
        const path = await expectCancelled(wd.home, gaveUpAt, /^mcp client$/);
        expect(existsSync(join(wd.ws, 'out.txt'))).toBe(false);
        await closeThenContinues(t, wd, c, path);
      } finally {
        await c.close();
        c.server?.proc.kill('SIGKILL');
      }
    }, 90_000);

    it(`${t}, ${rev}: the client's connection closes mid-call`, async () => {
      const wd = world('slow');
      let gaveUpAt = 0;
      let closed: Promise<void> | undefined;
      const c = await connect(t, mode, wd);
      try {
        const call = c.client.callTool({ name: 'bridle_run', arguments: { prompt: 'Say something slowly.' } }, { onprogress: (p) => void (p.message === 'step t1.s1' && ((gaveUpAt = Date.now()), (closed = c.close()))) });
        await expect(call).rejects.toThrow();
        await closed;
        // Over stdio the server stops with its stdin; over HTTP it goes on serving others.
        const path = await expectCancelled(wd.home, gaveUpAt, t === 'stdio' ? /^mcp (client|: the server is stopping)$/ : /^mcp client$/);
        await closeThenContinues(t, wd, c, path);
      } finally {
        c.server?.proc.kill('SIGKILL');
      }
    }, 90_000);
  }
});
