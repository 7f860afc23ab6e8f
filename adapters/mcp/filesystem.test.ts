/**
 * Against the MCP project's reference filesystem server
 * (`@modelcontextprotocol/server-filesystem`, a development dependency),
 * whose `read_media_file` answers with an image part and a
 * `structuredContent` copy of it: what reaches the model is a short note,
 * never the image as base64 (issue 23: a 300 KiB image reached it as 65,601
 * characters).
 */
import { realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { McpConfig } from './config.js';
import { connectMcp, type McpConnection } from './connection.js';
import { tempDir } from '../../test/helpers/temp.js';

const FILESYSTEM = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-filesystem/dist/index.js');

let conn: McpConnection;
let ws: string;
beforeAll(async () => {
  ws = realpathSync(tempDir('bridle-mcp-fs-'));
  // A PNG signature and 300 KiB of bytes after it: the server reads by extension, not by decoding.
  writeFileSync(join(ws, 'picture.png'), Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), Buffer.alloc(300 * 1024, 0x5a)]));
  writeFileSync(join(ws, 'notes.txt'), 'plain words');
  conn = await connectMcp(McpConfig.parse({ command: process.execPath, args: [FILESYSTEM, ws] }), { id: 'mcp:fs', cwd: ws, signal: new AbortController().signal });
});
afterAll(async () => {
  await conn?.close();
  rmSync(ws, { recursive: true, force: true });
});

const call = (tool: string, args: unknown) => conn.call(tool, args, new AbortController().signal);

describe('the reference server-filesystem', () => {
  it('read_media_file on a 300 KiB image: the model-visible text is one short note naming its type and size, with no base64', async () => {
    const out = await call('read_media_file', { path: join(ws, 'picture.png') });
    expect(out.status).toBe('ok');
    expect(out.content).toBe('[image: image/png, 300.0 KiB; not shown: this session passes text only]');
    expect(out.content.length).toBeLessThan(200);
  });

  it('read_text_file is text, as it was', async () => {
    expect((await call('read_text_file', { path: join(ws, 'notes.txt') })).content).toBe('plain words');
  });
});
