/**
 * What bridle's client sends a stdio server, read from a server that
 * records every line it receives (`test/helpers/mcp-recording-server.ts`,
 * compiled: `npm run build` first). The spec forbids cancelling
 * `initialize`, and a request that has been answered has nothing left to
 * cancel: bridle sent `notifications/cancelled` for both, to every stdio
 * server, once the start deadline passed or the session closed (issue 23).
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURE, requireFixture } from '../../test/helpers/mcp-fixture.js';
import { McpConfig } from './config.js';
import { connectMcp } from './connection.js';
import { tempDir } from '../../test/helpers/temp.js';

const RECORDING = FIXTURE.replace(/mcp-fixture-server\.js$/, 'mcp-recording-server.js');

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
beforeAll(() => void requireFixture());

type Line = { id?: number | string; method?: string; params?: { requestId?: number | string } };

function recorded(): { path: string; read: () => Line[] } {
  const dir = tempDir('bridle-mcp-rec-');
  dirs.push(dir);
  const path = join(dir, 'received.jsonl');
  const read = () => (existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Line) : []);
  return { path, read };
}

const start = (path: string, session: AbortSignal, startTimeoutMs = 30_000) =>
  connectMcp(McpConfig.parse({ command: process.execPath, args: [RECORDING, path], startTimeoutMs }), { id: 'mcp:rec', cwd: tmpdir(), signal: session });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const cancels = (lines: Line[]) => lines.filter((l) => l.method === 'notifications/cancelled');

describe('notifications/cancelled, as a stdio server receives them', () => {
  it('never for initialize once the start deadline passes after a start that succeeded, nor at close', async () => {
    const rec = recorded();
    const t0 = performance.now();
    const c = await start(rec.path, new AbortController().signal, 1500);
    expect(await c.call('echo', { text: 'hi' }, new AbortController().signal)).toEqual({ status: 'ok', content: 'echo: hi' });
    await sleep(Math.max(0, t0 + 1800 - performance.now()));
    await c.close();
    expect(rec.read().some((l) => l.method === 'initialize')).toBe(true);
    expect(cancels(rec.read())).toEqual([]);
  });

  it('never when the session closes (its signal aborted) after the start, nor for calls that already finished', async () => {
    const rec = recorded();
    const session = new AbortController();
    const c = await start(rec.path, session.signal);
    const call = new AbortController();
    expect(await c.call('echo', { text: 'done' }, call.signal)).toEqual({ status: 'ok', content: 'echo: done' });
    call.abort(new Error('the step ended'));
    session.abort(new Error('the session closed'));
    await sleep(100);
    await c.close();
    expect(cancels(rec.read())).toEqual([]);
  });

  it('once, naming the call, for a call aborted while it runs', async () => {
    const rec = recorded();
    const c = await start(rec.path, new AbortController().signal);
    const call = new AbortController();
    const running = c.call('slow', { ms: 5000 }, call.signal);
    await sleep(100);
    call.abort(new Error('the user cancelled'));
    await expect(running).rejects.toThrow('the user cancelled');
    await sleep(100);
    await c.close();
    const slow = rec.read().find((l) => l.method === 'tools/call');
    expect(cancels(rec.read())).toEqual([expect.objectContaining({ params: expect.objectContaining({ requestId: slow!.id }) })]);
  });
});
