/**
 * A world for tests of `bridle acp` in process: a temporary root with a
 * `BRIDLE_HOME` and a workspace, scripted models written into it, agents
 * built from the product as the CLI composes it (closed after each test),
 * and the few requests every test starts with.
 */
import { mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { methods, type ClientContext } from '@agentclientprotocol/sdk';
import { afterEach, beforeEach } from 'vitest';
import { acpAgentOptions } from '../../cli/acp.js';
import { composeProduct, type SettingFlags } from '../../cli/settings.js';
import type { Entry } from '../../log/entries.js';
import { parseLog } from '../../log/parse.js';
import { createAcpAgent, type AcpAgent } from '../../server/acp/agent.js';
import { tempDir } from './temp.js';

export interface AcpWorld {
  /** This test's temporary root, its `BRIDLE_HOME` and its workspace (the `--cwd`). */
  root: string;
  home: string;
  ws: string;
  /** What the agents' openers reported (a row that failed to mount, say). */
  readonly problems: string[];
  /** A scripted model's responses, as a file for `model: scripted:<file>`. */
  script(responses: unknown[]): string;
  /** An agent on the product these flags compose (sandbox off and approval ask unless they say otherwise). */
  agentWith(flags: SettingFlags): Promise<AcpAgent>;
  /** Closes an agent made some other way after the test, as `agentWith`'s are. */
  closeAfter(agent: AcpAgent): AcpAgent;
  /** The entries of a session's log under `home`. */
  logOf(id: string): Entry[];
  /** `initialize`, then `session/new` in the workspace: the session's id. */
  start(ctx: ClientContext, capabilities?: object): Promise<string>;
  prompt: typeof prompt;
}

/** A scripted model's `write_file` call. */
export const writeCall = (path: string, content: string) => ({ name: 'write_file', arguments: { path, content } });

/** `session/prompt` with one text block. */
const prompt = (ctx: ClientContext, sessionId: string, text: string) => ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text }] });

/** Registers the hooks that make and remove the world before and after each test. */
export function useAcpWorld(): AcpWorld {
  const agents: AcpAgent[] = [];
  let scripts = 0;
  const w: AcpWorld = {
    root: '',
    home: '',
    ws: '',
    problems: [],
    script(responses) {
      const file = join(w.root, `script-${++scripts}.json`);
      writeFileSync(file, JSON.stringify({ responses }));
      return file;
    },
    async agentWith(flags) {
      const product = await composeProduct({ sandbox: 'off', approval: 'ask', ...flags }, { env: { BRIDLE_HOME: w.home } });
      const a = createAcpAgent({ ...acpAgentOptions(product, (m) => w.problems.push(m), {}), info: { name: 'bridle', version: '0' } });
      agents.push(a);
      return a;
    },
    closeAfter(agent) {
      agents.push(agent);
      return agent;
    },
    logOf: (id) => parseLog(readFileSync(join(w.home, 'sessions', `${id}.jsonl`), 'utf8')).entries,
    async start(ctx, capabilities = {}) {
      await ctx.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: capabilities, clientInfo: { name: 'test-client', version: '1' } });
      return (await ctx.request(methods.agent.session.new, { cwd: w.ws, mcpServers: [] })).sessionId;
    },
    prompt,
  };
  beforeEach(() => {
    w.root = realpathSync(tempDir('bridle-acp-'));
    w.home = join(w.root, 'home');
    w.ws = join(w.root, 'ws');
    mkdirSync(w.ws);
  });
  afterEach(async () => {
    for (const a of agents.splice(0)) await a.close();
    rmSync(w.root, { recursive: true, force: true });
  });
  return w;
}
