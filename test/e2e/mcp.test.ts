/**
 * MCP tools in `bridle run` as a user runs it: a `--patch` file mounts the
 * fixture server (built with the SDK's server side) and the reference
 * server-everything; the model (a local OpenAI-wire server) calls their
 * tools; approvals are asked like any write — on a terminal (a real pty,
 * through `script`) and without one. The log verifies and replays through
 * the machines. Needs `npm run build` (the CLI and the fixture).
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Entry, EntryOf } from '../../log/entries.js';
import { verifyLog } from '../../log/verify.js';
import { readSessionLog, tempWorld } from '../helpers/cli-world.js';
import { CLI, runCli } from '../helpers/cli.js';
import { FIXTURE, requireFixture } from '../helpers/mcp-fixture.js';
import { startOpenAIServer, textReply, toolCallReply, type OpenAIServer } from '../helpers/openai-sse-server.js';

const EVERYTHING = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/dist/index.js');

let srv: OpenAIServer;
let home: string;
let ws: string;
let root: string;
beforeAll(() => void requireFixture());
beforeEach(async () => {
  srv = await startOpenAIServer();
  ({ home, ws, root } = tempWorld('bridle-e2e-mcp-'));
});
afterEach(() => srv.close());

/** A --patch file (outside the workspace, as configuration always is) mounting these servers. */
function patchFile(rows: Record<string, { command: string; args: string[]; trusted?: boolean }>): string {
  const path = join(root, 'mcp.json');
  writeFileSync(path, JSON.stringify({ patch: Object.entries(rows).map(([name, config]) => ({ insert: true, id: `mcp:${name}`, use: 'mcp', config })) }));
  return path;
}
const fixture = (...args: string[]) => ({ command: process.execPath, args: [FIXTURE, ...args] });
const of = <K extends Entry['kind']>(log: Entry[], kind: K) => log.filter((e): e is EntryOf<K> => e.kind === kind);
const sessionId = () => readdirSync(join(home, 'sessions'))[0]!.replace(/\.jsonl$/, '');
const env = () => ({ BRIDLE_HOME: home, OPENAI_API_KEY: 'sk-e2e-secret-value' });

describe('MCP tools in bridle run', () => {
  it('read-only tools run, a write asks (no terminal: denied), an allow rule lets one run, a broken server is one warning, a crash mid-call is MCP_SERVER_EXITED; replay --machines accepts the log', async () => {
    srv.enqueue(
      toolCallReply([
        { id: 'a', name: 'mcp__fx__echo', arguments: '{"text":"hello"}' },
        { id: 'b', name: 'mcp__everything__get-sum', arguments: '{"a":2,"b":40}' },
        { id: 'c', name: 'mcp__fx__write_note', arguments: '{"file":"note.txt","text":"x"}' },
      ]),
      toolCallReply([{ id: 'd', name: 'mcp__fx__crash', arguments: '{}' }]),
      toolCallReply([{ id: 'e', name: 'mcp__fx__echo', arguments: '{"text":"again"}' }]),
      textReply('Done.'),
    );
    // Both servers trusted: their readOnlyHint tools run without asking.
    const patch = patchFile({ fx: { ...fixture(), trusted: true }, everything: { command: process.execPath, args: [EVERYTHING, 'stdio'], trusted: true }, broken: fixture('--exit-at-start') });
    // crash is no read-only tool: an allow rule lets it run without asking, as for any tool.
    const r = await runCli(['run', '--base-url', srv.url, '--model', 'm', '--cwd', ws, '--approval', 'ask', '--allow', 'mcp__fx__crash:^\\{\\}$', '--patch', patch, 'use the servers'], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('bridle: warning: the MCP server mcp:broken did not start: it exited before it had started. Its last words on stderr: fixture: refusing to start (MCP_START_FAILED); its tools are not offered');
    expect(r.stderr).toMatch(/mcp: mcp:fx: \d+ tools \(\d+ read-only\)/);
    expect(r.stderr).toContain('bridle: warning: mcp:fx: "broken schema" left out: its input schema cannot be checked');
    // Calls are shown by the MCP tool's presenter: the tools were known when the transcript was drawn.
    expect(r.stdout).toContain('→ fx: echo {"text":"hello"}');

    // The first request already offered both servers' tools, and none of the broken one's.
    const names = (srv.requests[0]!.body.tools as { function: { name: string } }[]).map((t) => t.function.name);
    expect(names).toEqual(expect.arrayContaining(['read_file', 'mcp__fx__echo', 'mcp__everything__get-sum', 'mcp__everything__echo']));
    expect(names.some((n) => n.startsWith('mcp__broken__'))).toBe(false);

    const log = readSessionLog(home);
    const results = new Map(of(log, 'tool/result').map((x) => [x.toolCallId, x]));
    expect(results.get('a')).toMatchObject({ status: 'ok', content: 'echo: hello' });
    expect(results.get('b')).toMatchObject({ status: 'ok', content: expect.stringContaining('42') });
    expect(results.get('c')).toMatchObject({ status: 'denied' });
    expect(existsSync(join(ws, 'note.txt'))).toBe(false);
    expect(of(log, 'approval/asked').map((a) => a.name)).toEqual(['mcp__fx__write_note']);
    expect(results.get('d')).toMatchObject({ status: 'error', code: 'MCP_SERVER_EXITED' });
    expect(results.get('e')).toMatchObject({ status: 'error', code: 'MCP_SERVER_EXITED' });
    expect(verifyLog(log).violations).toEqual([]);
    // The key in bridle's environment reached no server, and is nowhere in the log.
    expect(readFileSync(join(home, 'sessions', `${sessionId()}.jsonl`), 'utf8')).not.toContain('sk-e2e-secret-value');

    const replay = await runCli(['replay', sessionId(), '--machines'], { env: { BRIDLE_HOME: home } });
    expect(replay.code, replay.stdout + replay.stderr).toBe(0);
    expect(replay.stdout).toMatch(/mcp\/server\s+mcp:broken failed MCP_START_FAILED/);
  });

  it('a server not marked trusted whose readOnlyHint tool writes outside the workspace: under --approval never it does not run, and says why (issue 20, item 3)', async () => {
    const outside = join(root, 'outside.txt');
    srv.enqueue(toolCallReply([{ id: 'w', name: 'mcp__fx__sneaky_write', arguments: JSON.stringify({ path: outside, text: 'pwned' }) }]), textReply('Done.'));
    const r = await runCli(['run', '--base-url', srv.url, '--model', 'm', '--cwd', ws, '--approval', 'never', '--patch', patchFile({ fx: fixture() }), 'look'], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(outside)).toBe(false);
    const log = readSessionLog(home);
    expect(of(log, 'tool/dispatch')).toEqual([]);
    expect(of(log, 'tool/result')[0]).toMatchObject({ status: 'denied', content: expect.stringContaining('approval policy "never" (nobody is asked) refuses it, NO_CONFINEMENT: mcp__fx__sneaky_write is a tool of the MCP server mcp:fx, which runs outside the sandbox and its row does not say trusted: true') });
    expect(r.stderr).toMatch(/mcp: mcp:fx: \d+ tools \(0 read-only\)/);
  });

  it('on a terminal the write is asked and, answered yes, runs in the workspace', async () => {
    srv.enqueue(toolCallReply([{ id: 'w', name: 'mcp__fx__write_note', arguments: '{"file":"note.txt","text":"written over MCP"}' }]), textReply('Wrote it.'));
    const patch = patchFile({ fx: fixture() });
    const cmd = [process.execPath, CLI, 'run', '--base-url', srv.url, '--model', 'm', '--cwd', ws, '--approval', 'ask', '--patch', patch, 'write a note'].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
    // `script` gives the CLI a real terminal; the answer waits in its input until the question reads it.
    const child = spawn('script', ['-qec', cmd, '/dev/null'], { env: { PATH: process.env.PATH, HOME: process.env.HOME, TERM: 'dumb', ...env() }, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const answered = new Promise<void>((resolve) => {
      const onData = () => {
        if (!out.includes('[y]es / [n]o')) return;
        child.stdout.off('data', onData);
        child.stdin.write('y\n');
        resolve();
      };
      child.stdout.on('data', onData);
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    await answered;
    expect(code, out).toBe(0);
    expect(out).toContain('? fx: write_note {"file":"note.txt","text":"written over MCP"}');
    expect(readFileSync(join(ws, 'note.txt'), 'utf8')).toBe('written over MCP');
    const log = readSessionLog(home);
    expect(of(log, 'approval/decided')).toEqual([expect.objectContaining({ outcome: 'allowed-once', by: 'terminal' })]);
    expect(of(log, 'tool/result')[0]).toMatchObject({ status: 'ok', content: `wrote note.txt in ${ws}` });
  });

  it('a session continued in a second process starts its servers again; the log, with a start per process, replays', async () => {
    srv.enqueue(toolCallReply([{ id: 'a', name: 'mcp__fx__echo', arguments: '{"text":"one"}' }]), textReply('One.'), toolCallReply([{ id: 'b', name: 'mcp__fx__echo', arguments: '{"text":"two"}' }]), textReply('Two.'));
    const patch = patchFile({ fx: { ...fixture(), trusted: true } });
    const first = await runCli(['run', '--base-url', srv.url, '--model', 'm', '--cwd', ws, '--patch', patch, 'first'], { env: env() });
    expect(first.code, first.stderr).toBe(0);
    const second = await runCli(['run', '--base-url', srv.url, '--model', 'm', '--cwd', ws, '--patch', patch, '--session', sessionId(), 'second'], { env: env() });
    expect(second.code, second.stderr).toBe(0);
    const log = readSessionLog(home);
    expect(log.map((e) => e.kind).filter((k) => k === 'mcp/server' || k === 'turn/start' || k === 'checkpoint')).toEqual(['mcp/server', 'turn/start', 'checkpoint', 'mcp/server', 'turn/start', 'checkpoint']);
    expect(of(log, 'tool/result').map((r) => r.content)).toEqual(['echo: one', 'echo: two']);
    const replay = await runCli(['replay', sessionId(), '--machines'], { env: { BRIDLE_HOME: home } });
    expect(replay.code, replay.stdout + replay.stderr).toBe(0);
  });

  it('config --dump shows the row with its defaults; a bad row is a usage error naming it', async () => {
    const patch = patchFile({ fx: fixture() });
    const dump = await runCli(['config', '--dump', '--json', '--patch', patch], { env: { BRIDLE_HOME: home } });
    expect(dump.code, dump.stderr).toBe(0);
    const rows = (JSON.parse(dump.stdout) as { rows: { id: string; use: string; config?: unknown }[] }).rows;
    expect(rows.find((x) => x.id === 'mcp:fx')).toMatchObject({ use: 'mcp', config: { command: process.execPath, args: [FIXTURE], timeoutMs: 120_000, startTimeoutMs: 30_000 } });
    const bad = join(root, 'bad.json');
    writeFileSync(bad, JSON.stringify({ patch: [{ insert: true, id: 'mcp:x', use: 'mcp', config: { url: 'file:///etc/passwd' } }] }));
    const r = await runCli(['run', '--base-url', srv.url, '--model', 'm', '--cwd', ws, '--patch', bad, 'hi'], { env: env() });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('mcp:x');
    expect(r.stderr).toContain('url must be an http:// or https:// URL');
  });
});
