/**
 * Every host that goes on with a stored session by id goes on in the loop its log ran (ADR 0096, after ADR
 * 0088's `bridle resume`): a session whose `session/start` names one loop module, continued under a product
 * whose loop is another file (`LOOP_MISMATCH`) or bridle's own (`LOOP_UNAVAILABLE`), is refused by name and its
 * log left byte for byte as it was — `mcp` (`bridle_run` with `session`: an error result), `serve`
 * (`session/attach`: `-32003` with that reason, before the claim), `acp` (`session/load`, `session/resume`),
 * `run --session` (a `UsageError`, exit 2).
 * The same loop goes on. In process, through each command's own opener.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { methods, RequestError } from '@agentclientprotocol/sdk';
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { acpAgentOptions } from '../../cli/acp.js';
import { bridleMcpOptions, mcpProducts } from '../../cli/mcp.js';
import { LoopChangedError, UsageError } from '../../cli/errors.js';
import { openSession } from '../../cli/open-session.js';
import { startServe } from '../../cli/serve.js';
import { composeProduct } from '../../cli/settings.js';
import type { EntryOf } from '../../log/entries.js';
import { parseLog } from '../../log/parse.js';
import { createAcpAgent } from '../../server/acp/agent.js';
import { createBridleMcpServer } from '../../server/mcp/bridle-mcp.js';
import { recordingClient } from '../helpers/acp.js';
import { tempWorld } from '../helpers/cli-world.js';
import { THREE_STEPS, TWO_STEPS } from '../helpers/loop-modules.js';
import { RpcClient } from '../helpers/rpc-client.js';

const LOGGED = /the log ran the loop row loop:agent, .*two-steps\.js \(sha256 [0-9a-f]{12}…\)/;

let scripts = 0;
let root: string;
let home: string;
let ws: string;
const sink = { write: () => true } as unknown as NodeJS.WritableStream;
beforeEach(() => {
  ({ root, home, ws } = tempWorld('bridle-loop-continued-'));
  writeFileSync(join(root, 'two-steps.js'), TWO_STEPS);
  writeFileSync(join(root, 'three-steps.js'), THREE_STEPS);
  for (const name of ['two-steps', 'three-steps']) writeFileSync(join(root, `${name}.yaml`), `patch:\n  - { id: loop:agent, use: ${JSON.stringify(join(root, `${name}.js`))} }\n`);
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const script = (responses: unknown[]) => {
  const p = join(root, `script-${++scripts}.json`);
  writeFileSync(p, JSON.stringify({ responses }));
  return `scripted:${p}`;
};
/** The product a host composes: under the `loop` module's patch, or with bridle's own loop. */
const product = (loop: 'two-steps' | 'three-steps' | 'own', text = 'again') =>
  composeProduct({ sandbox: 'off', approval: 'auto', model: script([{ text }]), ...(loop !== 'own' ? { patch: join(root, `${loop}.yaml`) } : {}) }, { env: { BRIDLE_HOME: home } });

/** A stored session that ran one turn under the two-steps module: its id, and its log as it is. */
async function storedSession(): Promise<{ id: string; log: string; text: () => string }> {
  const opened = await openSession({ product: await product('two-steps', 'first'), cwd: ws });
  opened.start();
  await opened.session.run('hello');
  await opened.session.close();
  const log = opened.logPath;
  const start = parseLog(readFileSync(log, 'utf8')).entries[0] as EntryOf<'session/start'>;
  expect(start.loop).toMatchObject({ row: 'loop:agent', use: join(root, 'two-steps.js') });
  return { id: opened.session.id, log, text: () => readFileSync(log, 'utf8') };
}

const turns = (log: string) => parseLog(readFileSync(log, 'utf8')).entries.filter((e) => e.kind === 'turn/start').length;

describe('a stored session goes on in the loop its log ran, whichever host continues it', () => {
  it('mcp: bridle_run with the session under another loop is an error result naming LOOP_MISMATCH; nothing is appended; the same loop goes on', async () => {
    const s = await storedSession();
    const before = s.text();
    const call = async (loop: 'two-steps' | 'three-steps') => {
      const [a, b] = InMemoryTransport.createLinkedPair();
      await createBridleMcpServer(bridleMcpOptions(mcpProducts(await product(loop)), {})).connect(a);
      const client = new Client({ name: 't', version: '1' });
      await client.connect(b);
      try {
        return await client.callTool({ name: 'bridle_run', arguments: { prompt: 'go on', session: s.id } });
      } finally {
        await client.close();
      }
    };
    const refused = await call('three-steps');
    expect(refused.isError).toBe(true);
    const [text] = refused.content as { type: string; text: string }[];
    expect(text!.text).toMatch(/^bridle: LOOP_MISMATCH: session \S+: the log ran the loop row loop:agent, .*two-steps\.js .*; the product's is row loop:agent, .*three-steps\.js /);
    expect(s.text()).toBe(before);

    const same = await call('two-steps');
    expect(same.isError, JSON.stringify(same.content)).toBeFalsy();
    expect(turns(s.log)).toBe(2);
  });

  it('serve: session/attach of a stored session under another loop is refused -32003 with its code, before the claim: a log that wants repair is left as it was', async () => {
    const s = await storedSession();
    // The log as a crash mid-turn leaves it: a claim would repair it (close the turn) before the open refused.
    const lines = s.text().split('\n');
    writeFileSync(s.log, `${lines.slice(0, lines.findIndex((l) => l.includes('"kind":"turn/end"'))).join('\n')}\n`);
    const before = s.text();
    for (const [loop, reason] of [['three-steps', 'LOOP_MISMATCH'], ['own', 'LOOP_UNAVAILABLE']] as const) {
      const started = await startServe(await product(loop), { port: '0', cwd: ws }, sink, sink);
      try {
        const client = await RpcClient.connect(started.server.url, { token: started.token });
        try {
          const err = await client.call('session/attach', { sessionId: s.id }).then(() => undefined, (e: unknown) => e as { message: string; rpc: { code: number; data: { reason: string } } });
          expect(err?.rpc).toMatchObject({ code: -32003, data: { reason } });
          expect(err?.message).toMatch(LOGGED);
        } finally {
          client.close();
        }
      } finally {
        await started.server.close();
      }
      expect(s.text()).toBe(before);
    }
  });

  it('acp: session/load and session/resume of a stored session under another loop are refused naming LOOP_MISMATCH; nothing is appended', async () => {
    const s = await storedSession();
    const before = s.text();
    const agent = createAcpAgent({ ...acpAgentOptions(await product('three-steps'), () => undefined, {}), info: { name: 'bridle', version: '0' } });
    try {
      const { app } = recordingClient();
      const errs = await app.connectWith(agent.app, async (ctx) => {
        await ctx.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
        const refusal = (e: unknown) => e as RequestError;
        const load = await ctx.request(methods.agent.session.load, { sessionId: s.id, cwd: ws, mcpServers: [] }).then(() => undefined, refusal);
        const resume = await ctx.request(methods.agent.session.resume, { sessionId: s.id, cwd: ws, mcpServers: [] }).then(() => undefined, refusal);
        return [load, resume];
      });
      for (const err of errs) {
        expect(err).toBeInstanceOf(RequestError);
        expect(err!.data).toMatchObject({ reason: 'LOOP_MISMATCH' });
        expect(err!.message).toMatch(LOGGED);
      }
    } finally {
      await agent.close();
    }
    expect(s.text()).toBe(before);
  });

  it('run --session (the opener every command shares): a UsageError (exit 2) naming the code, LOOP_UNAVAILABLE under bridle\'s own loop; nothing is appended', async () => {
    const s = await storedSession();
    const before = s.text();
    const err = await openSession({ product: await product('own'), session: s.id }).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(UsageError);
    expect(err).toBeInstanceOf(LoopChangedError);
    expect((err as Error).message).toMatch(/^LOOP_UNAVAILABLE: session \S+: the log ran the loop row loop:agent, .*; the product runs bridle's own loop; go on with it under the product that ran it \(its --profile or --patch\)$/);
    expect(s.text()).toBe(before);
  });
});
