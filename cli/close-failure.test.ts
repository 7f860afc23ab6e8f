/**
 * `bridle run` and `bridle chat` when the session's last flush fails as it closes (ADR 0017, ADR 0073): the turn
 * before was saved and shown, then one line says the session could not be saved as it closed, and the exit is 1.
 * In-process: the session `openSession` opens closes as it would, then rejects as a store whose close fails does.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LogNotDurableError } from '../log/errors.js';
import { tempDir } from '../test/helpers/temp.js';

const closeFails = { on: false };
vi.mock('./open-session.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('./open-session.js')>();
  return {
    ...real,
    openSession: async (o: Parameters<typeof real.openSession>[0]) => {
      const opened = await real.openSession(o);
      const close = opened.session.close.bind(opened.session);
      opened.session.close = async () => {
        await close();
        if (closeFails.on) throw new LogNotDurableError(9, 'EIO: i/o error, close', 'EIO');
      };
      return opened;
    },
  };
});
const { runPrompt } = await import('./run.js');
const { chatCommand } = await import('./chat.js');
const { composeProduct } = await import('./settings.js');

let dir: string;
let out = '';
let err = '';
beforeEach(() => {
  dir = fs.realpathSync(tempDir('bridle-close-fails-'));
  fs.mkdirSync(path.join(dir, 'ws'));
  vi.stubEnv('BRIDLE_HOME', path.join(dir, 'home'));
  out = err = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((s) => ((out += String(s)), true));
  vi.spyOn(process.stderr, 'write').mockImplementation((s) => ((err += String(s)), true));
});
afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
  closeFails.on = false;
  fs.rmSync(dir, { recursive: true, force: true });
});

const flags = () => {
  const f = path.join(dir, 'model.json');
  fs.writeFileSync(f, JSON.stringify({ responses: [{ text: 'all done' }] }));
  return { model: `scripted:${f}`, cwd: path.join(dir, 'ws'), approval: 'auto', sandbox: 'off' } as const;
};
const closeLines = (text: string) => text.split('\n').filter((l) => l.includes('could not be saved as it closed'));
const LINE = /^bridle: the session could not be saved as it closed \(LOG_NOT_DURABLE: .*EIO: i\/o error, close\); the turns before it were saved; once the disk is fixed, `bridle resume .*` continues from what was saved$/;

async function chat(): Promise<{ code: number; said: string }> {
  const f = flags();
  let said = '';
  const sink = new PassThrough();
  const errs = new PassThrough();
  errs.on('data', (b: Buffer) => (said += b.toString()));
  sink.resume();
  const code = await chatCommand(await composeProduct(f), f, { input: Readable.from(['hello\n']), out: sink, err: errs });
  return { code, said };
}

describe('the line printed when the log cannot be saved as the session closes', () => {
  it('bridle run: the turn shown as completed, then the line; exit 1', async () => {
    closeFails.on = true;
    const f = flags();
    const code = await runPrompt('hello', await composeProduct(f), f);
    expect(out).toMatch(/turn t1 ended: completed/);
    expect(closeLines(err)).toEqual([expect.stringMatching(LINE)]);
    expect(code).toBe(1);
  });

  it('bridle chat: the line once, after the chat; exit 1', async () => {
    closeFails.on = true;
    const { code, said } = await chat();
    expect(closeLines(said)).toEqual([expect.stringMatching(LINE)]);
    expect(code).toBe(1);
  });

  it('a close that succeeds says nothing of the kind; exit 0', async () => {
    const f = flags();
    expect(await runPrompt('hello', await composeProduct(f), f)).toBe(0);
    expect(closeLines(err)).toEqual([]);
    const { code, said } = await chat();
    expect(closeLines(said)).toEqual([]);
    expect(code).toBe(0);
  });
});
