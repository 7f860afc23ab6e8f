/**
 * A stdio MCP server on the SDK's v2 server side that asks during its calls
 * (ADR 0065). Tools: `deploy` asks to confirm with a form (`confirm`
 * boolean, required; `note` string) and says what it was told; `pick` asks
 * with a multiple choice, which bridle cannot show; `slow` reports progress
 * three times; `peek` (read-only) asks a plain yes or no; `trace` says what trace context it was given (env
 * `TRACEPARENT`, `_meta.traceparent`). Served through `serveStdio`
 * (2026-07-28, the input requests embedded in `input_required` results);
 * `--legacy` connects a plain stdio transport, a 2025 server that pushes
 * `elicitation/create`. Compiled to `dist/test/helpers/mcp-asking-server.js`.
 */
import { acceptedContent, inputRequired, McpServer, type ServerContext } from '@modelcontextprotocol/server';
import { serveStdio, StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { z } from 'zod';

const legacy = process.argv.includes('--legacy');
const text = (t: string) => ({ content: [{ type: 'text' as const, text: t }] });

/** The form's answer: on 2026-07-28 from the retried call's responses, on 2025 by asking the client outright. */
async function ask(ctx: ServerContext, key: string, message: string, requestedSchema: Record<string, unknown>) {
  if (legacy) {
    const r = await ctx.mcpReq.elicitInput({ mode: 'form', message, requestedSchema } as never);
    return { done: true as const, answer: r };
  }
  const responses = ctx.mcpReq.inputResponses;
  const answer = responses?.[key] as { action: string; content?: Record<string, unknown> } | undefined;
  if (answer) return { done: true as const, answer };
  return { done: false as const, result: inputRequired({ inputRequests: { [key]: inputRequired.elicit({ message, requestedSchema } as never) } }) };
}

function build(): McpServer {
  const server = new McpServer({ name: 'bridle-asking', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.registerTool('deploy', { description: 'Deploy, once a person confirms.', inputSchema: z.object({ env: z.string() }) }, async ({ env }, ctx) => {
    const form = { type: 'object', properties: { confirm: { type: 'boolean', title: 'Deploy now?' }, note: { type: 'string', description: 'A note for the release' } }, required: ['confirm'] };
    const asked = await ask(ctx, 'confirm', `Deploy to ${env}?`, form);
    if (!asked.done) return asked.result as never;
    const a = asked.answer;
    if (a.action !== 'accept') return text(`not deployed: ${a.action}`);
    const c = (a.content ?? {}) as { confirm?: boolean; note?: string };
    void acceptedContent;
    return text(c.confirm ? `deployed to ${env}${c.note ? ` (${c.note})` : ''}` : `not deployed: not confirmed`);
  });
  server.registerTool('pick', { description: 'Pick fish.', inputSchema: z.object({}) }, async (_args, ctx) => {
    const form = { type: 'object', properties: { fish: { type: 'array', items: { type: 'string', enum: ['tuna', 'trout'] } } } };
    const asked = await ask(ctx, 'fish', 'Which fish?', form);
    if (!asked.done) return asked.result as never;
    return text(`picked: ${asked.answer.action}`);
  });
  server.registerTool('peek', { description: 'Read a secret, if a person agrees.', inputSchema: z.object({}), annotations: { readOnlyHint: true } }, async (_args, ctx) => {
    const asked = await ask(ctx, 'agree', 'Show the secret?', { type: 'object', properties: {} });
    if (!asked.done) return asked.result as never;
    return text(asked.answer.action === 'accept' ? 'the secret is 42' : `not shown: ${asked.answer.action}`);
  });
  server.registerTool('slow', { description: 'Three steps, reported.', inputSchema: z.object({}) }, async (_args, ctx) => {
    const token = ctx.mcpReq._meta?.progressToken;
    for (let i = 1; i <= 3; i++) {
      if (token !== undefined) await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress: i, total: 3, message: `step ${i}` } });
    }
    return text(`done${token === undefined ? ' (no progress token)' : ''}`);
  });
  server.registerTool('trace', { description: 'The trace context this server was given.', inputSchema: z.object({}) }, async (_args, ctx) =>
    text(JSON.stringify({ env: process.env.TRACEPARENT ?? null, meta: (ctx.mcpReq._meta as Record<string, unknown> | undefined)?.traceparent ?? null })),
  );
  return server;
}

if (legacy) void build().connect(new StdioServerTransport());
else serveStdio(build);
