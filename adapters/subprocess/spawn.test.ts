import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Launch } from '../../safety/sandbox.js';
import { OutputCapture } from './capture.js';
import { spawnProcess } from './spawn.js';
import { tempDir } from '../../test/helpers/temp.js';

let dir: string;
beforeEach(() => {
  dir = fs.realpathSync(tempDir('bridle-shell-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

function bash(command: string, overrides: Partial<Launch> = {}) {
  return spawnProcess({
    argv: ['bash', '-c', command],
    cwd: dir,
    env: { ...process.env } as Record<string, string>,
    timeoutMs: 10_000,
    maxOutputBytes: 64 * 1024,
    signal: new AbortController().signal,
    ...overrides,
  });
}

/** Dead or a zombie waiting for a reaper (containers' PID 1 may never reap it). */
function isGone(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}

async function waitGone(pid: number): Promise<boolean> {
  for (let i = 0; i < 50 && !isGone(pid); i++) await new Promise((r) => setTimeout(r, 20));
  return isGone(pid);
}

describe('spawnProcess (under the local subprocess provider)', () => {
  it('reports exit codes and both streams, in the requested cwd', async () => {
    expect(await bash('echo out; echo err >&2; pwd')).toEqual({
      exitCode: 0,
      signal: null,
      stdout: `out\n${dir}\n`,
      stderr: 'err\n',
      timedOut: false,
      truncatedBytes: 0,
    });
    expect(await bash('exit 3')).toMatchObject({ exitCode: 3, signal: null, timedOut: false });
  });

  it('replaces the environment when one is given, and gives no stdin', async () => {
    const r = await bash('echo "$ONLY_THIS:${HOME:-unset}"; cat', { env: { ONLY_THIS: 'yes', PATH: process.env.PATH ?? '' } });
    expect(r.stdout).toBe('yes:unset\n');
  });

  it('rejects only when the command cannot be started', async () => {
    await expect(spawnProcess({ ...baseRequest(), argv: ['/no/such/program'] })).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(bash('true', { cwd: path.join(dir, 'missing') })).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(spawnProcess({ ...baseRequest(), argv: [] })).rejects.toThrow(/empty/);
  });

  it('kills the whole process group on timeout, grandchildren included', async () => {
    const started = Date.now();
    const r = await bash(`sleep 30 & echo $! > ${dir}/pid; sleep 30`, { timeoutMs: 300 });
    expect(Date.now() - started).toBeLessThan(3000);
    expect(r).toMatchObject({ exitCode: null, signal: 'SIGKILL', timedOut: true });
    const grandchild = Number(fs.readFileSync(path.join(dir, 'pid'), 'utf8'));
    expect(await waitGone(grandchild)).toBe(true);
  });

  it('kills the group when the signal aborts, and resolves at once if it already had', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const started = Date.now();
    const r = await bash('sleep 30', { signal: controller.signal });
    expect(Date.now() - started).toBeLessThan(3000);
    expect(r).toMatchObject({ exitCode: null, signal: 'SIGKILL', timedOut: false });

    const marker = path.join(dir, 'ran');
    const pre = await bash(`touch ${marker}`, { signal: AbortSignal.abort() });
    expect(pre).toMatchObject({ exitCode: null, signal: null, timedOut: false });
    expect(fs.existsSync(marker)).toBe(false);
  });

  it('does not wait for background processes that hold the output pipes', async () => {
    const started = Date.now();
    const r = await bash(`sleep 30 & echo $! > ${dir}/pid; echo done`);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(r).toMatchObject({ exitCode: 0, stdout: 'done\n' });
    expect(await waitGone(Number(fs.readFileSync(path.join(dir, 'pid'), 'utf8')))).toBe(true);
  });

  it('caps output, keeping head and tail and counting what was cut', async () => {
    const r = await bash('seq 1 20000', { maxOutputBytes: 1000 });
    const full = Array.from({ length: 20000 }, (_, i) => `${i + 1}\n`).join('');
    expect(r.truncatedBytes).toBe(Buffer.byteLength(full) - 1000);
    expect(r.stdout.startsWith('1\n2\n3\n')).toBe(true);
    expect(r.stdout.endsWith('19999\n20000\n')).toBe(true);
    expect(r.stdout).toContain(`[... ${r.truncatedBytes} bytes cut ...]`);
    expect(r.exitCode).toBe(0);
  });
});

function baseRequest(): Launch {
  return { argv: ['true'], cwd: dir, env: { ...process.env } as Record<string, string>, timeoutMs: 5000, maxOutputBytes: 1024, signal: new AbortController().signal };
}

describe('OutputCapture', () => {
  it('keeps everything under the cap', () => {
    const c = new OutputCapture(100);
    c.push('stdout', Buffer.from('hello '));
    c.push('stderr', Buffer.from('oops'));
    c.push('stdout', Buffer.from('world'));
    expect(c.finish()).toEqual({ stdout: 'hello world', stderr: 'oops', truncatedBytes: 0 });
  });

  it('keeps the stdout+stderr total within the cap, sharing the tail budget', () => {
    const c = new OutputCapture(20);
    c.push('stdout', Buffer.from('0123456789'));
    c.push('stdout', Buffer.from('abcdefghij'));
    c.push('stderr', Buffer.from('ABCDEFGHIJ'));
    const r = c.finish();
    // Head: 10 bytes of stdout. Tails: 10 bytes left, 5 each.
    expect(r.stdout).toBe('0123456789\n[... 5 bytes cut ...]\nfghij');
    expect(r.stderr).toBe('\n[... 5 bytes cut ...]\nFGHIJ');
    expect(r.truncatedBytes).toBe(10);
  });

  it('lends unused tail budget to the other stream', () => {
    const c = new OutputCapture(20);
    c.push('stdout', Buffer.from('x'.repeat(50)));
    c.push('stderr', Buffer.from('e'));
    const r = c.finish();
    expect(r.stderr).toBe('e');
    expect(Buffer.byteLength(r.stdout.replace(/\n\[\.\.\. \d+ bytes cut \.\.\.\]\n/, ''))).toBe(19);
    expect(r.truncatedBytes).toBe(31);
  });

  it('with a zero cap keeps nothing but counts it all', () => {
    const c = new OutputCapture(0);
    c.push('stdout', Buffer.from('abc'));
    expect(c.finish()).toEqual({ stdout: '\n[... 3 bytes cut ...]\n', stderr: '', truncatedBytes: 3 });
  });
});
