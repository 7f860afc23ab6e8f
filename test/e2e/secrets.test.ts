/**
 * bridle's own secrets (the model key, the server token) never reach a model
 * request or the session log, whatever the workspace plants: the real CLI runs
 * with canary values in its environment against a local OpenAI-wire server
 * that records every request, and the test scans both for the canaries.
 */
import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EntryOf } from '../../log/entries.js';
import { startOpenAIServer, textReply, toolCallReply, type OpenAIServer } from '../helpers/openai-sse-server.js';
import { readSessionLog, tempWorld, type CliWorld } from '../helpers/cli-world.js';
import { spawn } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import { CLI, runCli } from '../helpers/cli.js';

let srv: OpenAIServer;
let world: CliWorld;
beforeEach(async () => {
  srv = await startOpenAIServer();
  world = tempWorld('bridle-e2e-secrets-');
});
afterEach(() => srv.close());

const canaries = {
  OPENAI_API_KEY: `sk-canary-${randomBytes(12).toString('hex')}`,
  BRIDLE_TOKEN: `tok-canary-${randomBytes(12).toString('hex')}`,
  OTHER_API_KEY: `other-canary-${randomBytes(12).toString('hex')}`,
};

/** Everything that left the process for the model, less the Authorization header (where the key belongs). */
function wireText(): string {
  return srv.requests
    .map((q) => {
      const { authorization: _key, ...headers } = q.headers;
      return JSON.stringify({ path: q.path, headers, body: q.body });
    })
    .join('\n');
}

function logText(home: string): string {
  const dir = join(home, 'sessions');
  return readdirSync(dir).map((f) => readFileSync(join(dir, f), 'utf8')).join('\n');
}

function expectNoCanary(text: string, where: string): void {
  for (const [name, value] of Object.entries(canaries)) expect(text.includes(value), `${name} in ${where}`).toBe(false);
}

async function runWith(ws: string, calls: { name: string; arguments: unknown }[]) {
  srv.enqueue(
    toolCallReply(calls.map((c, i) => ({ id: `c${i}`, name: c.name, arguments: JSON.stringify(c.arguments) }))),
    textReply('done'),
  );
  const r = await runCli(['run', '--base-url', srv.url, '--model', 'm', '--cwd', ws, '--approval', 'auto', '--sandbox', 'bwrap', 'look around'], {
    env: { BRIDLE_HOME: world.home, ...canaries },
  });
  expect(r.stderr).not.toMatch(/at .*\.js:\d+/);
  expect(r.code).toBe(0);
  return r;
}

describe("bridle's own secrets never reach a request or the log", () => {
  it('AGENTS.md symlinked to /proc/self/environ (in the workspace, in a parent project dir, through a symlinked dir) and the file tools aimed at /proc', async () => {
    // The project root (it holds .git) lies above the workspace, so its AGENTS.md is read too.
    const project = join(world.root, 'project');
    const ws = join(project, 'ws');
    mkdirSync(join(project, '.git'), { recursive: true });
    mkdirSync(ws);
    symlinkSync('/proc/self/environ', join(project, 'AGENTS.md'));
    symlinkSync('/proc/self', join(ws, 'proc'));
    symlinkSync('proc/environ', join(ws, 'AGENTS.md'));
    writeFileSync(join(ws, 'notes.txt'), 'nothing secret\n');

    const r = await runWith(ws, [
      { name: 'read_file', arguments: { path: 'AGENTS.md' } },
      { name: 'read_file', arguments: { path: '../AGENTS.md' } },
      { name: 'read_file', arguments: { path: 'proc/environ' } },
      { name: 'read_file', arguments: { path: '/proc/self/environ' } },
      { name: 'grep', arguments: { pattern: 'canary' } },
      { name: 'grep', arguments: { pattern: 'canary', path: 'proc' } },
      { name: 'grep', arguments: { pattern: 'canary', path: '/proc/self/environ' } },
      { name: 'glob', arguments: { pattern: 'proc/**' } },
      { name: 'list_dir', arguments: { path: 'proc' } },
      { name: 'edit_file', arguments: { path: 'AGENTS.md', old_text: 'OPENAI', new_text: 'x' } },
      { name: 'bash', arguments: { command: 'cat /proc/self/environ /proc/1/environ /proc/$PPID/environ; env' } },
    ]);
    expectNoCanary(wireText(), 'a model request');
    expectNoCanary(logText(world.home), 'the session log');
    expectNoCanary(r.stdout + r.stderr, 'the CLI output');

    const results = readSessionLog(world.home).filter((e): e is EntryOf<'tool/result'> => e.kind === 'tool/result');
    const byCall = (i: number) => results.find((x) => x.toolCallId === `c${i}`)!;
    expect(Array.from({ length: 10 }, (_, i) => byCall(i).code ?? byCall(i).status)).toEqual([
      'OUTSIDE_WORKSPACE',
      'OUTSIDE_WORKSPACE',
      'OUTSIDE_WORKSPACE',
      'OUTSIDE_WORKSPACE',
      'ok',
      'OUTSIDE_WORKSPACE',
      'OUTSIDE_WORKSPACE',
      'ok',
      'OUTSIDE_WORKSPACE',
      'OUTSIDE_WORKSPACE',
    ]);
  });

  it('AGENTS.md hard-linked to a secret outside the workspace is not read; a regular one in the project root is', async () => {
    const project = join(world.root, 'project');
    const ws = join(project, 'ws');
    mkdirSync(join(project, '.git'), { recursive: true });
    mkdirSync(ws);
    writeFileSync(join(project, 'AGENTS.md'), 'Project rule: be brief.\n');
    const secret = join(world.root, 'key.env');
    writeFileSync(secret, `OPENAI_API_KEY=${canaries.OPENAI_API_KEY}\n`);
    linkSync(secret, join(ws, 'AGENTS.md'));

    await runWith(ws, [{ name: 'read_file', arguments: { path: 'notes.txt' } }]);
    expectNoCanary(wireText(), 'a model request');
    expectNoCanary(logText(world.home), 'the session log');
    const system = srv.requests[0]!.body.messages[0];
    expect(system.role).toBe('system');
    expect(system.content).toContain('Project rule: be brief.');
  });
});

describe('secrets a row holds are never printed (issue 20, item 11)', () => {
  const secret = () => `canary-${randomBytes(8).toString('hex')}`;

  it('config --dump, YAML and JSON: an MCP row\'s env values and secret headers, a URL\'s token and a store URL\'s password are ***', async () => {
    const s = { env: secret(), auth: secret(), apiKey: secret(), cookie: secret(), query: secret(), urlPass: secret(), store: secret() };
    const patch = join(world.root, 'mcp.json');
    writeFileSync(
      patch,
      JSON.stringify({
        patch: [
          { insert: true, id: 'mcp:gh', use: 'mcp', config: { command: 'npx', args: ['-y', 'server-github'], env: { GITHUB_PERSONAL_ACCESS_TOKEN: s.env } } },
          {
            insert: true,
            id: 'mcp:remote',
            use: 'mcp',
            config: { url: `https://bot:${s.urlPass}@mcp.example.com/mcp?token=${s.query}&page=1`, headers: { Authorization: `Bearer ${s.auth}`, 'X-Api-Key': s.apiKey, Cookie: `sid=${s.cookie}`, Accept: 'application/json' } },
          },
        ],
      }),
    );
    const args = ['config', '--dump', '--patch', patch, '--store', `postgres://bridle:${s.store}@127.0.0.1:1/bridle`];
    const yaml = await runCli(args, { env: { BRIDLE_HOME: world.home } });
    const json = await runCli([...args, '--json'], { env: { BRIDLE_HOME: world.home } });
    for (const r of [yaml, json]) {
      expect(r.code, r.stderr).toBe(0);
      for (const [name, value] of Object.entries(s)) expect(r.stdout + r.stderr, `${name} printed`).not.toContain(value);
    }
    const rows = (JSON.parse(json.stdout) as { rows: { id: string; config?: Record<string, unknown> }[] }).rows;
    const byId = new Map(rows.map((r) => [r.id, r.config]));
    // What is configured where still shows: the names, the hosts, the harmless values.
    expect(byId.get('mcp:gh')).toMatchObject({ command: 'npx', env: { GITHUB_PERSONAL_ACCESS_TOKEN: '***' } });
    expect(byId.get('mcp:remote')).toMatchObject({
      url: 'https://bot:***@mcp.example.com/mcp?token=***&page=1',
      headers: { Authorization: '***', 'X-Api-Key': '***', Cookie: '***', Accept: 'application/json' },
    });
    expect(JSON.stringify(byId.get('store'))).toContain('postgres://bridle:***@127.0.0.1:1/bridle');
    expect(yaml.stdout).toContain('GITHUB_PERSONAL_ACCESS_TOKEN: "***"');
  });

  it("serve's start line and an error line that echoes a URL: the --inspect URL's password is ***", async () => {
    const pass = secret();
    // No inspector there: the CLI's one error line names the URL.
    const refused = await runCli(['serve', '--port', '0', '--model', 'scripted:hello', '--cwd', world.ws, '--inspect', `ws://me:${pass}@127.0.0.1:9/inspect`], { env: { BRIDLE_HOME: world.home } });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('no inspector listening at ws://me:***@127.0.0.1:9/inspect');
    expect(refused.stdout + refused.stderr).not.toContain(pass);

    const inspector = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise<void>((r) => inspector.once('listening', () => r()));
    const { port } = inspector.address() as AddressInfo;
    const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--model', 'scripted:hello', '--cwd', world.ws, '--inspect', `ws://me:${pass}@127.0.0.1:${port}/`], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, BRIDLE_HOME: world.home },
    });
    let all = '';
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`serve did not start:\n${all}`)), 15_000);
        const take = (d: Buffer) => {
          all += d;
          if (/^sessions: /m.test(all)) {
            clearTimeout(timer);
            resolve();
          }
        };
        child.stdout.on('data', take);
        child.stderr.on('data', take);
        child.on('close', () => reject(new Error(`serve exited:\n${all}`)));
      });
    } finally {
      child.kill('SIGKILL');
      inspector.close();
    }
    expect(all).toContain(`inspect: reporting every actor to ws://me:***@127.0.0.1:${port}/`);
    expect(all).not.toContain(pass);
  });
});
