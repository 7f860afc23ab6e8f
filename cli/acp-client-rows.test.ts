/**
 * `bridle acp` with the editor's files and terminals: the `fs` and
 * `subprocess` rows patched to `acp-client`, driven by the official SDK's
 * client side playing an editor with unsaved buffers and its own terminals.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { methods, RequestError } from '@agentclientprotocol/sdk';
import { describe, expect, it } from 'vitest';
import { verifyLog } from '../log/verify.js';
import { choose, recordingClient, updatesOf, type PermissionAnswer } from '../test/helpers/acp.js';
import { useAcpWorld, writeCall } from '../test/helpers/acp-world.js';

const w = useAcpWorld();

function editorClient(buffers: Map<string, string>, answer?: PermissionAnswer) {
  const { app, record } = recordingClient(answer ?? (() => choose('allow-once')));
  const terminals = new Map<string, { child: ChildProcess; output: string; exit: Promise<{ exitCode: number | null; signal: string | null }> }>();
  const asked: { method: string; params: unknown }[] = [];
  app
    .onRequest(methods.client.fs.readTextFile, ({ params }) => {
      asked.push({ method: 'read', params });
      const text = buffers.get(params.path);
      if (text === undefined) throw RequestError.resourceNotFound(params.path);
      return { content: text };
    })
    .onRequest(methods.client.fs.writeTextFile, ({ params }) => {
      asked.push({ method: 'write', params });
      buffers.set(params.path, params.content);
      return {};
    })
    .onRequest(methods.client.terminal.create, ({ params }) => {
      asked.push({ method: 'terminal', params });
      const child = spawn(params.command, params.args ?? [], { cwd: params.cwd ?? undefined, env: { PATH: process.env.PATH, EDITOR_SECRET: 'leak' } });
      const t = { child, output: '', exit: new Promise<{ exitCode: number | null; signal: string | null }>((r) => child.on('close', (exitCode, signal) => r({ exitCode, signal }))) };
      child.stdout.on('data', (d) => (t.output += d));
      child.stderr.on('data', (d) => (t.output += d));
      const id = `term-${terminals.size + 1}`;
      terminals.set(id, t);
      return { terminalId: id };
    })
    .onRequest(methods.client.terminal.waitForExit, ({ params }) => terminals.get(params.terminalId)!.exit)
    .onRequest(methods.client.terminal.output, ({ params }) => ({ output: terminals.get(params.terminalId)!.output, truncated: false }))
    .onRequest(methods.client.terminal.kill, ({ params }) => void terminals.get(params.terminalId)!.child.kill('SIGKILL'))
    .onRequest(methods.client.terminal.release, ({ params }) => {
      terminals.get(params.terminalId)?.child.kill('SIGKILL');
      terminals.delete(params.terminalId);
    });
  return { app, record, asked, terminals };
}

describe('the client\'s files and terminals (rows fs and subprocess: acp-client)', () => {
  const patchFile = () => {
    const file = join(w.root, 'acp-client.yaml');
    writeFileSync(file, 'patch:\n  - { id: fs, use: acp-client }\n  - { id: subprocess, use: acp-client }\n');
    return file;
  };
  const fsCaps = { fs: { readTextFile: true, writeTextFile: true }, terminal: true };

  it('read_file reads the editor\'s buffer, write_file and edit_file write through the editor, bash runs in its terminal with bridle\'s environment only', async () => {
    writeFileSync(join(w.ws, 'a.txt'), 'on disk\n');
    const buffers = new Map([[join(w.ws, 'a.txt'), 'unsaved edit\n']]);
    const agent = await w.agentWith({
      approval: 'auto',
      patch: patchFile(),
      model: `scripted:${w.script([
        { toolCalls: [{ name: 'read_file', arguments: { path: 'a.txt' } }] },
        { toolCalls: [{ name: 'edit_file', arguments: { path: 'a.txt', old_text: 'unsaved', new_text: 'edited' } }] },
        { toolCalls: [writeCall('sub/new.txt', 'brand new\n')] },
        { toolCalls: [{ name: 'bash', arguments: { command: 'echo from-terminal; echo "secret=${EDITOR_SECRET:-none}"' } }] },
        { text: 'done' },
      ])}`,
    });
    const { app, record, asked } = editorClient(buffers);
    const sessionId = await app.connectWith(agent.app, async (ctx) => {
      const id = await w.start(ctx, fsCaps);
      await w.prompt(ctx, id, 'go');
      return id;
    });
    const results = w.logOf(sessionId).filter((e) => e.kind === 'tool/result');
    expect(results.map((r) => r.status)).toEqual(['ok', 'ok', 'ok', 'ok']);
    expect(results[0]!.content).toContain('unsaved edit');
    expect(buffers.get(join(w.ws, 'a.txt'))).toBe('edited edit\n');
    expect(readFileSync(join(w.ws, 'a.txt'), 'utf8')).toBe('on disk\n');
    expect(buffers.get(join(w.ws, 'sub', 'new.txt'))).toBe('brand new\n');
    expect(results[3]!.content).toContain('from-terminal');
    expect(results[3]!.content).toContain('secret=none');
    const terminal = asked.find((a) => a.method === 'terminal')!.params as { command: string; args: string[]; cwd: string };
    expect([terminal.command, terminal.args[0]]).toEqual(['env', '-i']);
    expect(terminal.cwd).toBe(w.ws);
    expect(updatesOf(record, 'tool_call_update').filter((u) => u.status === 'completed')).toHaveLength(4);
    expect(verifyLog(w.logOf(sessionId)).violations).toEqual([]);
  });

  it('confinement still applies: a path outside the workspace is refused before the editor is asked anything', async () => {
    writeFileSync(join(w.root, 'outside.txt'), 'secret');
    const agent = await w.agentWith({ approval: 'auto', patch: patchFile(), model: `scripted:${w.script([{ toolCalls: [{ name: 'read_file', arguments: { path: '../outside.txt' } }, writeCall('../escape.txt', 'x'), writeCall('.git/hooks/pre-commit', 'x')] }, { text: 'ok' }])}` });
    const { app, asked } = editorClient(new Map([[join(w.root, 'outside.txt'), 'secret']]));
    const sessionId = await app.connectWith(agent.app, async (ctx) => {
      const id = await w.start(ctx, fsCaps);
      await w.prompt(ctx, id, 'go');
      return id;
    });
    expect(w.logOf(sessionId).filter((e) => e.kind === 'tool/result').map((r) => r.code)).toEqual(['OUTSIDE_WORKSPACE', 'OUTSIDE_WORKSPACE', 'PROTECTED_PATH']);
    expect(asked).toEqual([]);
  });

  it('a client that offers no fs cannot back the fs row: session/new fails naming why', async () => {
    const agent = await w.agentWith({ patch: patchFile(), model: `scripted:${w.script([])}` });
    const { app } = editorClient(new Map());
    const err = await app.connectWith(agent.app, (ctx) => w.start(ctx, {}).then(() => undefined, (e: unknown) => e));
    expect(err).toMatchObject({ code: -32000, message: expect.stringContaining('offers neither fs/read_text_file nor fs/write_text_file') });
  });
});
