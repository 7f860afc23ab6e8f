/**
 * A stdio MCP server on the SDK's v2 server side, served through
 * `serveStdio`, which speaks the 2026-07-28 revision to a client that asks
 * for it and the 2025 handshake to one that does not. Tools: `echo`.
 * `--modern-only` refuses 2025 openings. Compiled to
 * `dist/test/helpers/mcp-modern-server.js`.
 */
import { McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { z } from 'zod';

function build(): McpServer {
  const server = new McpServer({ name: 'bridle-modern', version: '2.0.0' }, { capabilities: { tools: {} } });
  server.registerTool('echo', { description: 'Echo the text back.', inputSchema: z.object({ text: z.string() }), annotations: { readOnlyHint: true } }, async ({ text }) => ({
    content: [{ type: 'text', text: `echo: ${text}` }],
  }));
  return server;
}

serveStdio(build, process.argv.includes('--modern-only') ? { legacy: 'reject' } : {});
