/**
 * FIFOs, sockets and devices in the workspace, met by the file tools through
 * the local file system: opening a FIFO for reading
 * blocks a thread-pool thread until a writer comes, so a handful of them once
 * wedged every file operation of the process (every session of a server). The
 * local file system refuses anything that is not a regular file, without
 * opening it; its walks skip them.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { editFileTool } from '../../tools/edit-file.js';
import { globTool } from '../../tools/glob.js';
import { grepTool } from '../../tools/grep.js';
import { readFileTool } from '../../tools/read-file.js';
import { createTempWorkspace, type TempWorkspace } from './testing.js';
import type { ToolOutput } from '../../ports/tools.js';
import { writeFileTool } from '../../tools/write-file.js';

let t: TempWorkspace;
let socket: net.Server | undefined;
const fifos = ['f1', 'f2', 'f3', 'f4', 'f5'];
const ws = (rel: string) => path.join(t.workspace, rel);

beforeEach(async () => {
  t = createTempWorkspace();
  t.write({ 'plain.txt': 'plain text\n' });
  for (const f of fifos) execFileSync('mkfifo', [ws(f)]);
  // A character device like /dev/null (bridle runs as root here; elsewhere mknod is refused and the case is skipped below).
  try {
    execFileSync('mknod', [ws('null-device'), 'c', '1', '3'], { stdio: 'ignore' });
  } catch {
    // not permitted
  }
  socket = net.createServer();
  await new Promise<void>((r) => socket!.listen(ws('sock'), r));
});
afterEach(async () => {
  // Unblocks any reader stuck opening a FIFO, so a failing run cannot wedge the thread pool for the next test.
  for (const f of fifos) {
    try {
      fs.closeSync(fs.openSync(ws(f), fs.constants.O_WRONLY | fs.constants.O_NONBLOCK));
    } catch {
      // no reader waiting
    }
  }
  await new Promise<void>((r) => socket!.close(() => r()));
  t.cleanup();
});

const HUNG = { status: 'error', code: 'HUNG', content: 'no answer within 3 s' } as const;
const within = (p: Promise<ToolOutput>, ms = 3000): Promise<ToolOutput> =>
  Promise.race([p, new Promise<ToolOutput>((r) => setTimeout(() => r(HUNG), ms))]);
const specials = () => ['f1', 'sock', ...(fs.existsSync(ws('null-device')) ? ['null-device'] : [])];

describe('FIFOs, sockets and devices', () => {
  it('five FIFOs read at once do not wedge the process: each is refused with NOT_A_FILE and a plain read still answers', async () => {
    const outs = await Promise.all(fifos.map((f) => within(readFileTool.execute({ path: f }, t.ctx))));
    expect(outs.map((o) => o.code)).toEqual(fifos.map(() => 'NOT_A_FILE'));
    expect(await within(readFileTool.execute({ path: 'plain.txt' }, t.ctx))).toMatchObject({ status: 'ok' });
  });

  it('read_file, grep, edit_file and write_file refuse each with NOT_A_FILE, quickly', async () => {
    for (const name of specials()) {
      const calls: [string, Promise<ToolOutput>][] = [
        ['read_file', readFileTool.execute({ path: name }, t.ctx)],
        ['grep', grepTool.execute({ pattern: 'x', path: name }, t.ctx)],
        ['edit_file', editFileTool.execute({ path: name, old_text: 'x', new_text: 'y' }, t.ctx)],
        ['write_file', writeFileTool.execute({ path: name, content: 'y' }, t.ctx)],
      ];
      for (const [tool, call] of calls) expect(await within(call), `${tool} ${name}`).toMatchObject({ status: 'error', code: 'NOT_A_FILE' });
    }
    expect(fs.statSync(ws('f1')).isFIFO()).toBe(true);
  });

  it('grep and glob walking the tree skip them', async () => {
    expect(await within(grepTool.execute({ pattern: 'text' }, t.ctx))).toEqual({ status: 'ok', content: 'plain.txt:1: plain text' });
    expect(await within(globTool.execute({ pattern: '**' }, t.ctx))).toEqual({ status: 'ok', content: 'plain.txt' });
  });
});
