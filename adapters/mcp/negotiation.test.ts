/**
 * The protocol revision, negotiated (ADR 0054): a server on the v2 SDK is
 * spoken to in 2026-07-28, one that only knows the 2025 revisions (the v1
 * SDK's fixture, a hand-written server) with the 2025 `initialize`
 * handshake, whether it refuses `server/discover` or stays silent on it.
 * Compiled servers: `npm run build` first.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURE, requireFixture } from '../../test/helpers/mcp-fixture.js';
import { McpConfig } from './config.js';
import { connectMcp, type McpConnection } from './connection.js';
import { tempDir } from '../../test/helpers/temp.js';

const MODERN = FIXTURE.replace(/mcp-fixture-server\.js$/, 'mcp-modern-server.js');
const FLOOD = FIXTURE.replace(/mcp-fixture-server\.js$/, 'mcp-flood-server.js');

const opened: McpConnection[] = [];
let ws: string;
beforeAll(() => void requireFixture());
afterEach(async () => {
  await Promise.all(opened.splice(0).map((c) => c.close()));
  if (ws) rmSync(ws, { recursive: true, force: true });
});

async function open(...args: string[]): Promise<McpConnection> {
  ws = tempDir('bridle-mcp-era-');
  const c = await connectMcp(McpConfig.parse({ command: process.execPath, args }), { id: 'mcp:era', cwd: ws, signal: new AbortController().signal });
  opened.push(c);
  return c;
}

describe('the protocol revision bridle and a server settle on', () => {
  it('2026-07-28 with a server that speaks it (the v2 SDK\'s serveStdio), and its tools answer', async () => {
    const c = await open(MODERN);
    expect(c.protocolVersion).toBe('2026-07-28');
    expect(c.serverInfo?.name).toBe('bridle-modern');
    // A server that does not declare the tasks extension: bridle does not declare it either (ADR 0084).
    expect(c.tasksExtension).toBe(false);
    expect(await c.call('echo', { text: 'modern' }, new AbortController().signal)).toEqual({ status: 'ok', content: 'echo: modern' });
  });

  it('2026-07-28 with a server that refuses every older revision', async () => {
    const c = await open(MODERN, '--modern-only');
    expect(c.protocolVersion).toBe('2026-07-28');
    expect(await c.call('echo', { text: 'strict' }, new AbortController().signal)).toEqual({ status: 'ok', content: 'echo: strict' });
  });

  it('a 2025 revision with a server on the v1 SDK, which refuses server/discover', async () => {
    const c = await open(FIXTURE);
    expect(c.protocolVersion).toMatch(/^2025-/);
    expect(await c.call('echo', { text: 'legacy' }, new AbortController().signal)).toEqual({ status: 'ok', content: 'echo: legacy' });
  });

  it('a 2025 revision with a server that never answers server/discover, after the probe\'s short deadline, not the start\'s', async () => {
    const t0 = performance.now();
    const c = await open(FLOOD);
    expect(c.protocolVersion).toBe('2025-06-18');
    expect(performance.now() - t0).toBeLessThan(10_000);
    expect(await c.call('small', {}, new AbortController().signal)).toEqual({ status: 'ok', content: 'small and fine' });
  });
});
