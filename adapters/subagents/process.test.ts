/**
 * The `process` provider's start against a child that answers `session/attach` and sends the backlog's first
 * entry in one write, as a loaded `bridle serve` often does: the child's `session/start` must still be heard.
 * The child here is a stand-in `bridle serve` (a script given as the row's `bridle`), so the write is made one on
 * purpose; the real one is driven end to end in test/e2e/subagent-process.test.ts.
 */
import { createRequire } from 'node:module';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SANDBOX, SESSION, SUBAGENTS } from '../../ports/index.js';
import type { ServiceLookup } from '../../ports/service.js';
import type { ChildRequest } from '../../ports/subagents.js';
import { tempDir } from '../../test/helpers/temp.js';
import { ProcessConfig, processSubagents } from './process.js';

const wsModule = pathToFileURL(join(createRequire(import.meta.url).resolve('ws'), '..', 'wrapper.mjs')).href;

/** A `bridle serve` stand-in: the attach's answer and the child's `session/start` leave in one corked write. */
const childScript = (start: object) => `
import { WebSocketServer } from ${JSON.stringify(wsModule)};
const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
wss.on('listening', () => process.stdout.write('bridle serve: ws://127.0.0.1:' + wss.address().port + '\\n'));
wss.on('connection', (ws) => ws.on('message', (data) => {
  const m = JSON.parse(String(data));
  const answer = (result) => ws.send(JSON.stringify({ jsonrpc: '2.0', id: m.id, result }));
  if (m.method === 'session/create') return answer({ sessionId: m.params.id });
  if (m.method !== 'session/attach') return answer({});
  ws._socket.cork();
  answer({ sessionId: m.params.sessionId, fromSeq: 1, durableSeq: 1 });
  ws.send(JSON.stringify({ jsonrpc: '2.0', method: 'session/entry', params: { sessionId: m.params.sessionId, entry: ${JSON.stringify(start)} } }));
  process.nextTick(() => ws._socket.uncork());
}));
process.stdin.on('end', () => process.exit(0)).resume();
`;

function lookup(home: string): ServiceLookup {
  const services = new Map<string, unknown>([
    [SESSION.id, { cwd: home, bridleHome: home }],
    [SUBAGENTS.id, { maxDepth: 1 }],
    [SANDBOX.id, { provider: { confines: false } }],
  ]);
  return {
    get: <T>(k: string | { id: string }) => services.get(typeof k === 'string' ? k : k.id) as T,
    has: (k) => services.has(typeof k === 'string' ? k : k.id),
    onDispose: () => undefined,
  };
}

describe('the process provider starts a child', () => {
  it("hears the child's session/start when it arrives in the same read as the attach's answer", async () => {
    const home = tempDir('bridle-process-');
    const id = 'parent.t1.s1.c1';
    const start = { seq: 1, at: '2026-12-03T12:00:00.000Z', kind: 'session/start', id, cwd: home, model: 'scripted', depth: 1, parent: 'parent', format: 2, config: { maxSteps: 10 } };
    const script = join(home, 'child.mjs');
    writeFileSync(script, childScript(start));
    const config = ProcessConfig.parse({ bridle: script, args: [], startTimeoutMs: 5_000 });
    const provider = processSubagents.create(config, lookup(home));
    const req: ChildRequest = { id, depth: 1, parent: 'parent', parentEntries: () => [], signal: new AbortController().signal };
    const child = await provider.open(req);
    try {
      expect(child.entries()).toMatchObject([{ kind: 'session/start', id, depth: 1 }]);
    } finally {
      await child.close();
    }
  });
});
