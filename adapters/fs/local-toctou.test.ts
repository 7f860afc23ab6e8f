/**
 * Check-then-use races in the file tools over the local file system, made
 * deterministic: its path check (`resolveInWorkspace`) and its directory walk
 * are wrapped so that the world changes right after they answer, exactly in
 * the gap a concurrent session on the same workspace could use. Whatever was checked, nothing outside the
 * workspace may be read, listed or written.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

const hooks = vi.hoisted(() => ({ afterCheck: undefined as undefined | (() => void), afterWalk: undefined as undefined | (() => void) }));

vi.mock('./local-resolve.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('./local-resolve.js')>();
  return {
    ...real,
    resolveInWorkspace: async (...args: Parameters<typeof real.resolveInWorkspace>) => {
      const answer = await real.resolveInWorkspace(...args);
      hooks.afterCheck?.();
      return answer;
    },
  };
});
vi.mock('./local-walk.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('./local-walk.js')>();
  return {
    ...real,
    walkFiles: async function* (...args: Parameters<typeof real.walkFiles>) {
      yield* real.walkFiles(...args);
      hooks.afterWalk?.();
    },
  };
});

const { editFileTool } = await import('../../tools/edit-file.js');
const { grepTool } = await import('../../tools/grep.js');
const { listDirTool } = await import('../../tools/list-dir.js');
const { readFileTool } = await import('../../tools/read-file.js');
const { writeFileTool } = await import('../../tools/write-file.js');
const { createTempWorkspace } = await import('./testing.js');
type TempWorkspace = import('./testing.js').TempWorkspace;

let t: TempWorkspace;
beforeEach(() => {
  t = createTempWorkspace();
  t.write({ 'sub/existing.txt': 'inside\n' });
  fs.writeFileSync(path.join(t.outside, 'existing.txt'), 'outside secret\n');
});
afterEach(() => {
  hooks.afterCheck = undefined;
  hooks.afterWalk = undefined;
  t.cleanup();
});

const ws = (rel: string) => path.join(t.workspace, rel);
/** The race: `sub` is swapped for a symlink to the outside directory once the check has answered. */
const swapSubForLinkOut = () => {
  hooks.afterCheck = () => {
    hooks.afterCheck = undefined;
    fs.renameSync(ws('sub'), ws('sub-was'));
    fs.symlinkSync(t.outside, ws('sub'));
  };
};
const outsideNames = () => fs.readdirSync(t.outside).sort();
const run = <A>(tool: { execute(a: A, c: typeof t.ctx): Promise<{ status: string; code?: string; content: string }> }, args: A) =>
  tool.execute(args, t.ctx);

describe('TOCTOU: a directory swapped for a symlink after the check', () => {
  it('write_file of a new file creates nothing outside', async () => {
    swapSubForLinkOut();
    const out = await run(writeFileTool, { path: 'sub/new.txt', content: 'pwned' });
    expect(out).toMatchObject({ status: 'error', code: 'PATH_CHANGED' });
    expect(outsideNames()).toEqual(['existing.txt']);
  });

  it('write_file over an existing file leaves the outside file alone', async () => {
    swapSubForLinkOut();
    const out = await run(writeFileTool, { path: 'sub/existing.txt', content: 'pwned' });
    expect(out).toMatchObject({ status: 'error', code: 'PATH_CHANGED' });
    expect(fs.readFileSync(path.join(t.outside, 'existing.txt'), 'utf8')).toBe('outside secret\n');
  });

  it('write_file does not create missing parents through a symlink that appeared', async () => {
    hooks.afterCheck = () => {
      hooks.afterCheck = undefined;
      fs.symlinkSync(t.outside, ws('fresh'));
    };
    const out = await run(writeFileTool, { path: 'fresh/deeper/new.txt', content: 'pwned' });
    expect(out).toMatchObject({ status: 'error', code: 'PATH_CHANGED' });
    expect(outsideNames()).toEqual(['existing.txt']);
  });

  it('edit_file leaves the outside file alone', async () => {
    swapSubForLinkOut();
    const out = await run(editFileTool, { path: 'sub/existing.txt', old_text: 'secret', new_text: 'pwned' });
    expect(out).toMatchObject({ status: 'error', code: 'PATH_CHANGED' });
    expect(fs.readFileSync(path.join(t.outside, 'existing.txt'), 'utf8')).toBe('outside secret\n');
  });

  it('read_file does not return the outside file', async () => {
    swapSubForLinkOut();
    const out = await run(readFileTool, { path: 'sub/existing.txt' });
    expect(out).toMatchObject({ status: 'error', code: 'PATH_CHANGED' });
    expect(out.content).not.toContain('outside secret');
  });

  it('list_dir does not list the outside directory', async () => {
    swapSubForLinkOut();
    const out = await run(listDirTool, { path: 'sub' });
    expect(out).toMatchObject({ status: 'error', code: 'PATH_CHANGED' });
  });

  it('grep does not search the outside directory, walked or named', async () => {
    swapSubForLinkOut();
    expect((await run(grepTool, { pattern: 'secret', path: 'sub' })).content).not.toContain('outside secret');
    fs.rmSync(ws('sub'));
    fs.renameSync(ws('sub-was'), ws('sub'));
    // The walk saw a real directory; the files it listed are then reached through a symlink.
    hooks.afterWalk = () => {
      hooks.afterWalk = undefined;
      fs.renameSync(ws('sub'), ws('sub-was'));
      fs.symlinkSync(t.outside, ws('sub'));
    };
    expect((await run(grepTool, { pattern: 'secret' })).content).not.toContain('outside secret');
  });
});

describe('TOCTOU: a file swapped for a FIFO after the check or the walk', () => {
  const fifo = () => ws('sub/existing.txt');
  const swapForFifo = () => {
    fs.rmSync(fifo());
    execFileSync('mkfifo', [fifo()]);
  };
  afterEach(() => {
    // Unblocks a reader stuck opening the FIFO, so a failing run cannot wedge the thread pool.
    try {
      fs.closeSync(fs.openSync(fifo(), fs.constants.O_WRONLY | fs.constants.O_NONBLOCK));
    } catch {
      // no reader waiting, or no FIFO
    }
  });
  const within = <T>(p: Promise<T>, ms = 3000) =>
    Promise.race([p, new Promise<'HUNG'>((r) => setTimeout(() => r('HUNG'), ms))]);

  it('read_file answers NOT_A_FILE instead of blocking', async () => {
    hooks.afterCheck = () => ((hooks.afterCheck = undefined), swapForFifo());
    expect(await within(run(readFileTool, { path: 'sub/existing.txt' }))).toMatchObject({ code: 'NOT_A_FILE' });
  });

  it('grep skips a walked file that became a FIFO instead of blocking', async () => {
    hooks.afterWalk = () => ((hooks.afterWalk = undefined), swapForFifo());
    expect(await within(run(grepTool, { pattern: 'inside' }))).toMatchObject({ status: 'ok' });
  });

  it('edit_file answers NOT_A_FILE instead of blocking', async () => {
    hooks.afterCheck = () => ((hooks.afterCheck = undefined), swapForFifo());
    expect(await within(run(editFileTool, { path: 'sub/existing.txt', old_text: 'inside', new_text: 'x' }))).toMatchObject({
      code: 'NOT_A_FILE',
    });
  });
});

describe('TOCTOU: a real concurrent swapper', () => {
  it('write_file racing a thread that flips a directory and a symlink out never writes outside, in 300 attempts', async () => {
    // The swapper runs on its own thread, so the flips land anywhere inside the tool's system calls.
    const swapper = new Worker(
      `const fs = require('node:fs');
       const { workerData: w, parentPort } = require('node:worker_threads');
       parentPort.postMessage('swapping');
       for (;;) {
         try { fs.renameSync(w.dir, w.parked); fs.symlinkSync(w.outside, w.dir); } catch {}
         try { fs.unlinkSync(w.dir); fs.renameSync(w.parked, w.dir); } catch {}
       }`,
      { eval: true, workerData: { dir: ws('sub'), parked: ws('sub-parked'), outside: t.outside } },
    );
    await new Promise((r) => swapper.once('message', r));
    const codes = new Map<string, number>();
    try {
      for (let i = 0; i < 300; i++) {
        const out = await run(writeFileTool, { path: `sub/new-${i}.txt`, content: 'pwned' });
        const key = out.code ?? out.status;
        codes.set(key, (codes.get(key) ?? 0) + 1);
      }
    } finally {
      await swapper.terminate();
    }
    expect(outsideNames(), JSON.stringify([...codes])).toEqual(['existing.txt']);
  });
});
