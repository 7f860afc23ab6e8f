/**
 * `bridle mcp`'s pure parts and its HTTP front, in process: the default
 * policy a headless caller gets, the progress lines, the tool's result, and
 * the access checks in front of the SDK's handler (a stand-in handler here:
 * what reaches it is what passed them).
 */
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createMcpHandler, McpServer, type McpHttpHandler } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import type { Entry } from '../log/entries.js';
import { runResultOf } from '../server/mcp/bridle-mcp.js';
import { MCP_CALLER_HEADER, startMcpHttp } from '../server/mcp/http.js';
import { answeringProduct, describePolicy, headlessProduct, mcpProducts, progressLine } from './mcp.js';
import { policyOf } from './run.js';
import { composeProduct } from './settings.js';
import { tempDir } from '../test/helpers/temp.js';

const home = () => ({ env: { BRIDLE_HOME: tempDir('bridle-mcp-unit-') } });

describe('the policy bridle mcp runs sessions under', () => {
  it('is never when nobody chose one, and the chosen one when a flag did', async () => {
    expect(policyOf(await composeProduct({ model: 'scripted:x.json' }, home()))).toBe('ask');
    expect(policyOf(headlessProduct(await composeProduct({ model: 'scripted:x.json' }, home())))).toBe('never');
    expect(policyOf(headlessProduct(await composeProduct({ model: 'scripted:x.json', approval: 'auto' }, home())))).toBe('auto');
    expect(policyOf(headlessProduct(await composeProduct({ model: 'scripted:x.json', approval: 'ask' }, home())))).toBe('ask');
  });

  it('for a caller that answers input requests: ask when nobody chose one, the chosen one when a flag did (never stays never)', async () => {
    expect(policyOf(answeringProduct(await composeProduct({ model: 'scripted:x.json' }, home())))).toBe('ask');
    expect(policyOf(answeringProduct(await composeProduct({ model: 'scripted:x.json', approval: 'never' }, home())))).toBe('never');
    expect(policyOf(answeringProduct(await composeProduct({ model: 'scripted:x.json', approval: 'auto' }, home())))).toBe('auto');
    const both = mcpProducts(await composeProduct({ model: 'scripted:x.json' }, home()));
    expect(describePolicy(both)).toMatch(/^approval policy "ask" when you answer input requests .*else "never"/);
  });
});

describe('progress lines and the tool result', () => {
  const tools = new Map();
  it('a line per step, call, answer and turn end; nothing for the rest', () => {
    expect(progressLine({ kind: 'step/start', step: 't1.s2' } as Entry, tools)).toBe('step t1.s2');
    expect(progressLine({ kind: 'tool/call', name: 'bash', arguments: '{"command":"ls"}' } as Entry, tools)).toBe('→ bash {"command":"ls"}');
    expect(progressLine({ kind: 'turn/end', turn: 't1', reason: 'aborted' } as Entry, tools)).toBe('turn t1 ended: aborted');
    expect(progressLine({ kind: 'user/message' } as Entry, tools)).toBeUndefined();
  });

  it('a completed turn is its answer with the session and log; any other end is an error naming it', () => {
    const ok = runResultOf({ sessionId: 's1', log: '/l/s1.jsonl', reason: 'completed', answer: 'done' });
    expect(ok.isError).toBeUndefined();
    expect(ok.content[0]).toEqual({ type: 'text', text: 'done\n\nsession: s1\nlog: /l/s1.jsonl' });
    expect(ok.content.slice(1).map((c) => (c as { uri: string }).uri)).toEqual(['bridle://sessions/s1/log', 'bridle://sessions/s1/transcript']);
    const failed = runResultOf({ sessionId: 's1', log: '/l/s1.jsonl', reason: 'error', code: 'BUDGET_EXHAUSTED', answer: '' });
    expect(failed.isError).toBe(true);
    expect(failed.content[0]).toMatchObject({ text: expect.stringMatching(/^the turn ended error \(BUDGET_EXHAUSTED\)/) });
  });
});

describe("bridle mcp --http's front", () => {
  it('401 without the token or with a wrong one, 404 off /mcp, 403 for a foreign Origin (a foreign Host: the dns-rebinding scenario of the conformance suite); with the token the handler answers', async () => {
    let reached = 0;
    const handler = { fetch: async () => (reached++, new Response('{"ok":true}', { headers: { 'content-type': 'application/json' } })), close: async () => undefined } as unknown as McpHttpHandler;
    const srv = await startMcpHttp({ host: '127.0.0.1', port: 0, token: 'tok', handler });
    try {
      const post = (url: string, headers: Record<string, string> = {}) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: '{}' });
      expect((await post(srv.url)).status).toBe(401);
      expect((await post(srv.url, { authorization: 'Bearer nope' })).status).toBe(401);
      expect((await post(srv.url.replace('/mcp', '/other'), { authorization: 'Bearer tok' })).status).toBe(404);
      expect((await post(srv.url, { authorization: 'Bearer tok', origin: 'http://evil.example' })).status).toBe(403);
      expect(reached).toBe(0);
      const ok = await post(srv.url, { authorization: 'Bearer tok' });
      expect([ok.status, await ok.json()]).toEqual([200, { ok: true }]);
      expect((await post(`${srv.url}?token=tok`)).status).toBe(200);
      expect(reached).toBe(2);
    } finally {
      await srv.close();
    }
  });

  // The SDK's own handler and client: which of a caller's POSTs were answered with an identity (ADR 0101).
  for (const [mode, given] of [
    ['auto', []],
    ['legacy', ['initialize']],
  ] as const) {
    it(`gives a caller an identity only at a 2025 initialize (${mode === 'auto' ? '2026-07-28 stateless: never' : '2025: at initialize, then kept'})`, async () => {
      const handler = createMcpHandler(() => {
        const server = new McpServer({ name: 'front', version: '1.0.0' });
        server.registerTool('noop', { description: 'does nothing' }, () => ({ content: [] }));
        return server;
      });
      const srv = await startMcpHttp({ host: '127.0.0.1', port: 0, token: 'tok', handler });
      const answered: { method: string; sent: boolean; caller: string | null }[] = [];
      const recording = async (url: string | URL, init?: RequestInit) => {
        const answer = await fetch(url, init);
        const method = init?.method === 'POST' ? (JSON.parse(String(init.body)) as { method?: string }).method ?? '' : String(init?.method);
        answered.push({ method, sent: new Headers(init?.headers).has(MCP_CALLER_HEADER), caller: answer.headers.get(MCP_CALLER_HEADER) });
        return answer;
      };
      const client = new Client({ name: 'front-test', version: '1.0.0' }, { versionNegotiation: { mode } });
      try {
        await client.connect(new StreamableHTTPClientTransport(new URL(srv.url), { fetch: recording, requestInit: { headers: { authorization: 'Bearer tok' } } }));
        await client.listTools();
        await client.listTools();
        const posts = answered.filter((a) => a.method !== 'GET' && a.method !== 'DELETE');
        expect(posts.filter((a) => a.caller !== null).map((a) => a.method)).toEqual(given);
        expect(posts.some((a) => a.method === 'tools/list')).toBe(true);
        // A 2025 client sends the identity back on every later POST; a 2026-07-28 one never has one to send.
        expect(posts.filter((a) => a.sent).length).toBe(mode === 'legacy' ? posts.length - 1 : 0);
      } finally {
        await client.close();
        await srv.close();
      }
    });
  }
});
