/**
 * `bridle acp` driven by an ACP client nobody on this project wrote, as a new
 * user would meet it: `acpx` (a headless ACP client, from npm, installed
 * into a fresh project here) runs a prompt against `bridle acp` through a
 * turn with tool calls and permission questions — approved by its
 * `--approve-all`, refused by its `--deny-all` — and, with the fs and
 * subprocess rows on `acp-client`, reads, writes and runs commands through
 * acpx's own files and terminals, bash still under bwrap when it is there.
 * Every log passes `bridle replay`.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseLog } from '../../log/parse.js';
import type { Entry } from '../../log/entries.js';
import { CLI, runCli } from '../helpers/cli.js';
import { runCommand, userEnv } from '../helpers/npm.js';
import { findCommand } from '../helpers/system-deps.js';
import { tempDir } from '../helpers/temp.js';

/** The version this test was written against; a newer one may word its output differently. */
const ACPX = 'acpx@0.19.1';

let root: string;
let acpx: string;
let home: string;
let ws: string;

beforeAll(async () => {
  root = realpathSync(tempDir('bridle-acpx-'));
  const project = join(root, 'client');
  mkdirSync(project);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'acpx-user', private: true }));
  const install = await runCommand('npm', ['install', ACPX, '--no-audit', '--no-fund', '--prefer-offline'], { cwd: project, timeoutMs: 180_000 });
  expect(install.code, install.stderr).toBe(0);
  acpx = join(project, 'node_modules', '.bin', 'acpx');
}, 200_000);
afterAll(() => rmSync(root, { recursive: true, force: true }));

let n = 0;
beforeEach(() => {
  n++;
  home = join(root, `home-${n}`);
  ws = join(root, `ws-${n}`);
  mkdirSync(ws);
});

function script(responses: unknown[]): string {
  const file = join(root, `script-${n}.json`);
  writeFileSync(file, JSON.stringify({ responses }));
  return file;
}

/** `acpx --agent "bridle acp …" exec <prompt>`, with acpx's JSON output (every message of the conversation). */
async function exec(agentArgs: string[], acpxArgs: string[], prompt: string) {
  const agent = agentCommand(agentArgs);
  const r = await runCommand(acpx, ['--cwd', ws, '--format', 'json', ...acpxArgs, '--agent', agent, 'exec', prompt], {
    cwd: ws,
    env: userEnv({ HOME: join(root, `user-home-${n}`), BRIDLE_HOME: home }),
    timeoutMs: 90_000,
  });
  const messages = r.stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { method?: string; params?: { update?: { sessionUpdate: string; status?: string; toolCallId?: string } }; result?: { stopReason?: string } });
  return { ...r, messages, methods: messages.map((m) => m.method).filter(Boolean) as string[] };
}

/** The agent command acpx spawns: `bridle acp …`, quoted for acpx's own splitting of `--agent`. */
const agentCommand = (agentArgs: string[]) => [process.execPath, CLI, 'acp', ...agentArgs].map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(' ');

/**
 * `acpx --agent "sh -c 'tee <wire> | bridle acp …'" <command…>`: what acpx sent bridle is appended to `wire`
 * (acpx's own output shows only a prompt's conversation, not `sessions close` through its queue owner).
 */
async function acpxCommand(agentArgs: string[], wire: string, command: string[]) {
  const inner = `tee -a ${wire} | exec ${agentCommand(agentArgs)}`;
  expect(inner).not.toContain("'");
  const agent = `sh -c '${inner}'`;
  return runCommand(acpx, ['--cwd', ws, '--format', 'json', '--ttl', '30', '--agent', agent, ...command], {
    cwd: ws,
    env: userEnv({ HOME: join(root, `user-home-${n}`), BRIDLE_HOME: home }),
    timeoutMs: 90_000,
  });
}

const methodsIn = (wire: string): string[] => readFileSync(wire, 'utf8').split('\n').filter((l) => l.startsWith('{')).flatMap((l) => ((JSON.parse(l) as { method?: string }).method ?? []));

function onlyLog(): { id: string; entries: Entry[] } {
  const files = readdirSync(join(home, 'sessions')).filter((f) => f.endsWith('.jsonl'));
  expect(files).toHaveLength(1);
  return { id: files[0]!.replace(/\.jsonl$/, ''), entries: parseLog(readFileSync(join(home, 'sessions', files[0]!), 'utf8')).entries };
}

async function replays(id: string): Promise<void> {
  const r = await runCli(['replay', id, '--json'], { env: { BRIDLE_HOME: home } });
  expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, violations: [] });
  expect(r.code).toBe(0);
}

describe(`bridle acp driven by ${ACPX} (a headless ACP client from npm)`, () => {
  it('--approve-all: a turn with tool calls and a permission question, updates streamed, end_turn; the log replays', { timeout: 120_000 }, async () => {
    const model = `scripted:${script([{ text: 'Writing the file.', toolCalls: [{ name: 'write_file', arguments: { path: 'hello.txt', content: 'hi from acpx\n' } }, { name: 'list_dir', arguments: {} }] }, { text: 'Done.' }])}`;
    const r = await exec(['--model', model, '--approval', 'ask', '--sandbox', 'off'], ['--approve-all'], 'write hello.txt');
    expect(r.code, r.stderr).toBe(0);
    expect(r.methods.slice(0, 3)).toEqual(['initialize', 'session/new', 'session/prompt']);
    expect(r.methods.filter((m) => m === 'session/request_permission')).toHaveLength(1);
    const updates = r.messages.map((m) => m.params?.update).filter((u) => u !== undefined);
    expect(updates.filter((u) => u.sessionUpdate === 'tool_call').map((u) => u.toolCallId)).toEqual(['t1.s1.c1', 't1.s1.c2']);
    expect(updates.filter((u) => u.sessionUpdate === 'tool_call_update' && u.status === 'completed')).toHaveLength(2);
    expect(r.messages.find((m) => m.result?.stopReason)?.result).toEqual({ stopReason: 'end_turn' });
    expect(readFileSync(join(ws, 'hello.txt'), 'utf8')).toBe('hi from acpx\n');
    const log = onlyLog();
    expect(log.entries.find((e) => e.kind === 'approval/decided')).toMatchObject({ outcome: expect.stringMatching(/^allowed-/), by: 'acp:acpx' });
    await replays(log.id);
  });

  it('--deny-all: the permission question is answered with a reject option; nothing is written; the log replays', { timeout: 120_000 }, async () => {
    const model = `scripted:${script([{ toolCalls: [{ name: 'write_file', arguments: { path: 'no.txt', content: 'x' } }] }, { text: 'Refused, as you wish.' }])}`;
    const r = await exec(['--model', model, '--approval', 'ask', '--sandbox', 'off'], ['--deny-all'], 'write no.txt');
    expect(r.methods).toContain('session/request_permission');
    expect(existsSync(join(ws, 'no.txt'))).toBe(false);
    const log = onlyLog();
    expect(log.entries.find((e) => e.kind === 'approval/decided')).toMatchObject({ outcome: 'rejected', by: expect.stringMatching(/^acp:acpx/) });
    expect(log.entries.find((e) => e.kind === 'tool/dispatch')).toBeUndefined();
    await replays(log.id);
  });

  it('fs and subprocess on acp-client: the tools read and write through acpx\'s files and run bash in its terminal, confined', { timeout: 120_000 }, async () => {
    const patch = join(root, `patch-${n}.yaml`);
    writeFileSync(patch, 'patch:\n  - { id: fs, use: acp-client }\n  - { id: subprocess, use: acp-client }\n');
    const model = `scripted:${script([
      { toolCalls: [{ name: 'write_file', arguments: { path: 'sub/out.txt', content: 'via acpx\n' } }, { name: 'read_file', arguments: { path: 'sub/out.txt' } }, { name: 'bash', arguments: { command: 'echo from-bash; cat sub/out.txt' } }] },
      { text: 'Done.' },
    ])}`;
    // bwrap when this machine has it: the client's terminal runs the confined command.
    const sandbox = findCommand('bwrap', process.env) ? 'bwrap' : 'off';
    const r = await exec(['--model', model, '--approval', 'auto', '--sandbox', sandbox, '--patch', patch], ['--approve-all'], 'go');
    expect(r.code, r.stderr).toBe(0);
    for (const m of ['fs/write_text_file', 'fs/read_text_file', 'terminal/create', 'terminal/wait_for_exit', 'terminal/release']) expect(r.methods).toContain(m);
    expect(readFileSync(join(ws, 'sub', 'out.txt'), 'utf8')).toBe('via acpx\n');
    const log = onlyLog();
    const results = log.entries.filter((e) => e.kind === 'tool/result');
    expect(results.map((e) => e.status)).toEqual(['ok', 'ok', 'ok']);
    expect(results[2]!.content).toContain('from-bash\nvia acpx');
    await replays(log.id);
  });
  it('persistent sessions: `sessions new` (session/new), `prompt` in a new process (session/resume), `sessions list` (session/list), `sessions close` (session/close); the log replays', { timeout: 180_000 }, async () => {
    // acpx 0.19 has no command that sends session/delete (`sessions prune` removes only its own records): the
    // delete is covered through the SDK's client (cli/acp-lifecycle.test.ts, cli/acp-postgres.test.ts).
    const wire = join(root, `wire-${n}.ndjson`);
    const args = ['--model', `scripted:${script([{ text: 'Resumed.' }])}`, '--approval', 'auto', '--sandbox', 'off'];
    const steps: string[][] = [];
    for (const command of [['sessions', 'new'], ['prompt', 'fix the failing test'], ['sessions', 'list'], ['sessions', 'close']]) {
      const r = await acpxCommand(args, wire, command);
      expect(r.code, `${command.join(' ')}: ${r.stderr}`).toBe(0);
      steps.push(r.stdout.split('\n').filter((l) => l.startsWith('{"source"') || l.startsWith('{"action"')));
    }
    expect(methodsIn(wire)).toEqual(['initialize', 'session/new', 'initialize', 'session/resume', 'session/prompt', 'initialize', 'session/list', 'session/close']);
    const log = onlyLog();
    expect(JSON.parse(steps[2]![0]!)).toEqual({ source: 'agent', sessions: [{ sessionId: log.id, cwd: ws, title: 'fix the failing test', updatedAt: expect.any(String) }] });
    expect(JSON.parse(steps[3]![0]!)).toMatchObject({ action: 'session_closed', acpxSessionId: log.id });
    const kinds = log.entries.map((e) => e.kind);
    // One session: created, ended with its first process, reopened by the resume, ended by the close.
    expect(kinds.filter((k) => k === 'session/start' || k === 'session/reopen' || k === 'session/end')).toEqual(['session/start', 'session/end', 'session/reopen', 'session/end']);
    expect(log.entries.find((e) => e.kind === 'assistant/message')).toMatchObject({ blocks: [{ type: 'text', text: 'Resumed.' }] });
    await replays(log.id);
  });
});
