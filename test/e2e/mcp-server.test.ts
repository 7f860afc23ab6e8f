/**
 * `bridle mcp` as an MCP client sees it (the built CLI, `npm run build`
 * first), driven by the v2 SDK's own `Client`: over stdio, a `bridle_run`
 * call with the scripted model runs a session whose log lands in the store
 * (`bridle sessions` lists it, `bridle replay` verifies it), reports
 * progress, and is continued by its id; its log and transcript are
 * resources. Over HTTP, a missing or wrong token is refused (401), and a
 * caller's cancel aborts the turn, which the log closes as bridle does.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { describe, expect, it } from 'vitest';
import type { Entry } from '../../log/entries.js';
import { parseLog } from '../../log/parse.js';
import { verifyLog } from '../../log/verify.js';
import { CLI, runCli } from '../helpers/cli.js';
import { notesWorld } from '../helpers/cli-world.js';
import { startCliServer } from '../helpers/cli-server.js';

const world = () => notesWorld('bridle-mcp-server-');

const client = () => new Client({ name: 'bridle-test', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
const textOf = (r: { content?: unknown }) => ((r.content ?? []) as { type: string; text?: string }[]).filter((c) => c.type === 'text').map((c) => c.text).join('');
const entriesAt = (path: string): Entry[] => parseLog(readFileSync(path, 'utf8')).entries;

describe('bridle mcp over stdio', () => {
  it('bridle_run runs a session (progress on the way), its log lands in the store and replays; a second call continues it by id; log and transcript are resources', async () => {
    const w = world();
    const script = w.file('script.json', {
      label: 'scripted: read the notes, then answer (each opening of the session reads the script from its start)',
      responses: [{ toolCalls: [{ name: 'read_file', arguments: { path: 'notes.txt' } }] }, { text: 'The notes say 42.' }],
    });
    const env = { PATH: process.env.PATH!, HOME: process.env.HOME!, BRIDLE_HOME: w.home };
    const c = client();
    await c.connect(new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp', '--model', `scripted:${script}`, '--cwd', w.ws, '--sandbox', 'off'], env, stderr: 'pipe' }));
    try {
      expect((await c.listTools()).tools.map((t) => t.name)).toEqual(['bridle_run']);
      const progress: string[] = [];
      const first = await c.callTool({ name: 'bridle_run', arguments: { prompt: 'What do the notes say?' } }, { onprogress: (p) => void progress.push(p.message ?? '') });
      expect(first.isError).toBeFalsy();
      const out = first.structuredContent as { sessionId: string; log: string; reason: string; answer: string };
      expect(out).toMatchObject({ reason: 'completed', answer: 'The notes say 42.' });
      expect(textOf(first)).toContain(`log: ${out.log}`);
      expect(progress).toEqual(['step t1.s1', '→ read_file notes.txt', 'step t1.s2', 'turn t1 ended: completed']);

      const second = await c.callTool({ name: 'bridle_run', arguments: { prompt: 'And now?', session: out.sessionId } });
      expect(second.structuredContent).toMatchObject({ sessionId: out.sessionId, log: out.log, reason: 'completed', answer: 'The notes say 42.' });
      const entries = entriesAt(out.log);
      expect(entries.filter((e) => e.kind === 'turn/start').map((e) => (e as { input: string }).input)).toEqual(['What do the notes say?', 'And now?']);
      expect(entries.filter((e) => e.kind === 'turn/end')).toHaveLength(2);
      // Under `never` (no one to ask): the policy the session logged.
      expect(entries.find((e) => e.kind === 'session/start')).toMatchObject({ policy: expect.objectContaining({ approval: 'never' }) });
      expect(verifyLog(entries).violations).toEqual([]);

      const transcript = await c.readResource({ uri: `bridle://sessions/${out.sessionId}/transcript` });
      expect((transcript.contents[0] as { text: string }).text).toMatch(/turn\/end +completed[\s\S]*verifies/);
      const log = await c.readResource({ uri: `bridle://sessions/${out.sessionId}/log` });
      expect((log.contents[0] as { text: string }).text).toBe(readFileSync(out.log, 'utf8'));
      expect((await c.listResources()).resources.map((r) => r.uri)).toContain(`bridle://sessions/${out.sessionId}/log`);
      await expect(c.readResource({ uri: 'bridle://sessions/nope/log' })).rejects.toThrow(/nope/);
      const again = await c.callTool({ name: 'bridle_run', arguments: { prompt: 'x', session: 'no-such-session' } });
      expect(again).toMatchObject({ isError: true });
      expect(textOf(again)).toMatch(/^bridle: NO_SUCH_SESSION: /);

      const listed = await runCli(['sessions', '--json'], { env: { BRIDLE_HOME: w.home } });
      expect((JSON.parse(listed.stdout) as { sessions: { id: string }[] }).sessions.map((s) => s.id)).toEqual([out.sessionId]);
      const replay = await runCli(['replay', out.sessionId], { env: { BRIDLE_HOME: w.home } });
      expect(replay.code, replay.stdout + replay.stderr).toBe(0);
    } finally {
      await c.close();
    }
  }, 90_000);
});

describe('bridle mcp --http', () => {
  it('refuses a missing or wrong token (401); with the token, a caller that cancels a bridle_run call aborts the turn, and the log closes it', async () => {
    const w = world();
    const script = w.file('slow.json', { label: 'scripted: a slow answer', responses: [{ text: 'this takes a while to say' }] });
    const patch = w.file('patch.json', { patch: [{ id: 'model', use: 'scripted', config: { file: script, delayMs: 60_000 } }] });
    const srv = await startCliServer('mcp', ['--http', '--patch', patch, '--cwd', w.ws, '--sandbox', 'off'], { BRIDLE_HOME: w.home });
    try {
      expect(srv.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
      const bare = await fetch(srv.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      expect(bare.status).toBe(401);
      const wrong = client();
      await expect(wrong.connect(new StreamableHTTPClientTransport(new URL(srv.url), { requestInit: { headers: { authorization: 'Bearer not-the-token' } } }))).rejects.toThrow(/401/);

      const c = client();
      await c.connect(new StreamableHTTPClientTransport(new URL(srv.url), { requestInit: { headers: { authorization: `Bearer ${srv.token}` } } }));
      const stop = new AbortController();
      const call = c.callTool({ name: 'bridle_run', arguments: { prompt: 'Say something slowly.' } }, { signal: stop.signal, onprogress: (p) => void (p.message === 'step t1.s1' && stop.abort('the caller gave up')) });
      await expect(call).rejects.toThrow();
      const sessions = join(w.home, 'sessions');
      let entries: Entry[] = [];
      // The cancel reaches the server when the connection closes; a loaded machine may take its time to log it.
      for (const deadline = Date.now() + 60_000; !entries.some((e) => e.kind === 'turn/end') && Date.now() < deadline; ) {
        await new Promise((r) => setTimeout(r, 50));
        const log = existsSync(sessions) ? readdirSync(sessions).find((f) => f.endsWith('.jsonl')) : undefined;
        if (log) entries = entriesAt(join(sessions, log));
      }
      expect(entries.find((e) => e.kind === 'session/cancel')).toMatchObject({ by: 'mcp client' });
      expect(entries.find((e) => e.kind === 'turn/end')).toMatchObject({ reason: 'aborted' });
      expect(verifyLog(entries).violations).toEqual([]);
      await c.close();
    } finally {
      expect(await srv.stop()).toBe(0);
    }
  }, 90_000);
});
