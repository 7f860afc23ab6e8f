/**
 * No row module from a session's workspace, wherever a session opens (ADR 0087, after ADR 0077's decision 5):
 * `serve` (`session/create` with a cwd), `acp` (`session/new`), `mcp` (`bridle_run` in its `--cwd`), `resume`
 * (the workspace its log names) and `eval` (each run's workspace) compose, and import their row modules,
 * before they know the workspace; the session is refused when one of those modules lies inside it, with the
 * `UsageError` `run` gives, before anything is logged. In process, through each command's own opener.
 */
import { mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { methods, RequestError } from '@agentclientprotocol/sdk';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { acpAgentOptions } from '../../cli/acp.js';
import { runEval } from '../../cli/eval/run.js';
import { bridleMcpOptions, mcpProducts } from '../../cli/mcp.js';
import { openSession } from '../../cli/open-session.js';
import { resumeCommand } from '../../cli/resume.js';
import { startServe } from '../../cli/serve.js';
import { composeProduct, type SettingFlags } from '../../cli/settings.js';
import { UsageError, WorkspaceModuleError } from '../../cli/errors.js';
import { createAcpAgent } from '../../server/acp/agent.js';
import { recordingClient } from '../helpers/acp.js';
import { RpcClient } from '../helpers/rpc-client.js';
import { tempDir } from '../helpers/temp.js';

// `bridle eval` makes each run's workspace itself: the test names the one it makes, to put a module in it first.
let evalWorkspace: string | undefined;
vi.mock('node:fs', async (original) => {
  const real = await original<typeof fs>();
  return { ...real, mkdtempSync: (prefix: string, o?: unknown) => (evalWorkspace !== undefined && prefix.includes('bridle-eval-') ? (mkdirSync(evalWorkspace, { recursive: true }), evalWorkspace) : real.mkdtempSync(prefix, o as undefined)) };
});

/** A row module that does nothing: what must refuse the session is where it lies, not what it does. */
const INERT = `export default { name: 'inert', apply() {} };\n`;
const REFUSED = /row tool:mine \(patch .*\): module .*mine\.js is inside the workspace .*, where the agent can write/;

let scripts = 0;
let root: string;
let home: string;
let ws: string;
let patch: string;
const sink = { write: () => true } as unknown as NodeJS.WritableStream;
beforeEach(() => {
  root = realpathSync(tempDir('bridle-ws-modules-'));
  home = join(root, 'home');
  ws = join(root, 'ws');
  mkdirSync(ws);
  writeFileSync(join(ws, 'mine.js'), INERT);
  patch = join(root, 'patch.yaml');
  writeFileSync(patch, `patch:\n  - { insert: true, id: tool:mine, use: ${join(ws, 'mine.js')} }\n`);
});
afterEach(() => {
  evalWorkspace = undefined;
  rmSync(root, { recursive: true, force: true });
});

const script = (responses: unknown[]) => {
  const p = join(root, `script-${++scripts}.json`);
  writeFileSync(p, JSON.stringify({ responses }));
  return `scripted:${p}`;
};
/** Composed as the command composes: no workspace known, so the module is imported. */
const product = (flags: SettingFlags = {}) => composeProduct({ sandbox: 'off', approval: 'auto', patch, model: script([{ text: 'ok' }]), ...flags }, { env: { BRIDLE_HOME: home } });
const sessions = () => {
  try {
    return readdirSync(join(home, 'sessions')).filter((f) => f.endsWith('.jsonl'));
  } catch {
    return [];
  }
};

describe('a row module inside the workspace refuses the session wherever it opens', () => {
  it('serve: session/create with that cwd is refused, naming the row; no log is written', async () => {
    const started = await startServe(await product(), { port: '0', cwd: ws }, sink, sink);
    try {
      const client = await RpcClient.connect(started.server.url, { token: started.token });
      try {
        const err = await client.call('session/create', { cwd: ws }).then(() => undefined, (e: unknown) => e as { message: string; rpc: { code: number; data: { reason: string } } });
        expect(err?.message).toMatch(REFUSED);
        expect(err?.rpc).toMatchObject({ code: -32003, data: { reason: 'WORKSPACE_MODULE' } });
      } finally {
        client.close();
      }
    } finally {
      await started.server.close();
    }
    expect(sessions()).toEqual([]);
  });

  it('acp: session/new in that cwd is refused (WORKSPACE_MODULE), naming the row', async () => {
    const agent = createAcpAgent({ ...acpAgentOptions(await product(), () => undefined, {}), info: { name: 'bridle', version: '0' } });
    try {
      const { app } = recordingClient();
      const err = await app.connectWith(agent.app, async (ctx) => {
        await ctx.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
        return ctx.request(methods.agent.session.new, { cwd: ws, mcpServers: [] }).then(() => undefined, (e: unknown) => e as RequestError);
      });
      expect(err).toBeInstanceOf(RequestError);
      expect(JSON.stringify(err!.data)).toContain('WORKSPACE_MODULE');
      expect(err!.message + JSON.stringify(err!.data)).toMatch(REFUSED);
    } finally {
      await agent.close();
    }
    expect(sessions()).toEqual([]);
  });

  it('mcp: bridle_run in its --cwd is refused (WORKSPACE_MODULE), naming the row', async () => {
    const options = bridleMcpOptions(mcpProducts(await product()), { cwd: ws });
    const run = options.run({ prompt: 'go' }, { progress: () => undefined, signal: new AbortController().signal } as never);
    await expect(run).rejects.toMatchObject({ code: 'WORKSPACE_MODULE', message: expect.stringMatching(REFUSED) });
    expect(sessions()).toEqual([]);
  });

  it("resume: going on in the workspace the log names is refused, and the log is left as it was", async () => {
    const clean = await composeProduct({ sandbox: 'off', approval: 'auto', model: script([{ text: 'first' }]) }, { env: { BRIDLE_HOME: home } });
    const opened = await openSession({ product: clean, cwd: ws });
    opened.start();
    await opened.session.run('hello');
    await opened.session.close();
    const [log] = sessions();
    const before = fs.readFileSync(join(home, 'sessions', log!), 'utf8');
    const was = process.env.BRIDLE_HOME;
    process.env.BRIDLE_HOME = home;
    try {
      await expect(resumeCommand(log!.replace(/\.jsonl$/, ''), 'again', { sandbox: 'off', approval: 'auto', patch, model: script([{ text: 'second' }]) }, { write: () => true })).rejects.toThrow(REFUSED);
    } finally {
      if (was === undefined) delete process.env.BRIDLE_HOME;
      else process.env.BRIDLE_HOME = was;
    }
    expect(fs.readFileSync(join(home, 'sessions', log!), 'utf8')).toBe(before);
  });

  it("eval: a run whose workspace holds the module is refused (a set-up problem: it throws), its workspace removed", async () => {
    evalWorkspace = join(root, 'eval-run');
    mkdirSync(evalWorkspace);
    writeFileSync(join(evalWorkspace, 'mine.js'), INERT);
    writeFileSync(patch, `patch:\n  - { insert: true, id: tool:mine, use: ${join(evalWorkspace, 'mine.js')} }\n`);
    const task = join(root, 'task');
    mkdirSync(join(task, 'workspace'), { recursive: true });
    const p = await product();
    const plan = { evalId: 'e1', tasks: [{ name: 't', dir: task, prompt: 'go', check: 'true', checkTimeoutMs: 5000, workspace: join(task, 'workspace') }], runs: 1, productFor: async () => p, keep: false, progress: () => undefined };
    await expect(runEval(plan)).rejects.toThrow(REFUSED);
    expect(fs.existsSync(evalWorkspace)).toBe(false);
    expect(sessions()).toEqual([]);
  });

  it('the same product opens a session in a workspace that does not hold the module', async () => {
    const elsewhere = join(root, 'elsewhere');
    mkdirSync(elsewhere);
    const opened = await openSession({ product: await product(), cwd: elsewhere });
    await opened.session.close();
    expect(opened.workspace).toBe(elsewhere);
  });

  it('is a UsageError (exit 2), as run gives', async () => {
    const err = await openSession({ product: await product(), cwd: ws }).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(UsageError);
    expect(err).toBeInstanceOf(WorkspaceModuleError);
  });
});
