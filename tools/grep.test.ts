import path from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { executeTool } from '../actors/execute-tool.js';
import * as grepModule from './grep.js';
import { GREP_MAX_MATCHES, grepTool, type GrepArgs } from './grep.js';
import { createTempWorkspace, type TempWorkspace } from '../adapters/fs/testing.js';

let t: TempWorkspace;
beforeEach(() => {
  t = createTempWorkspace({ bridleHomeInside: true });
  t.write({
    'b.ts': 'const todo = 1;\n// TODO: later\n',
    'a.ts': 'nothing\nTODO first\n',
    'src/c.ts': 'x\ny\nTODO deep\n',
    'node_modules/pkg/index.js': 'TODO hidden\n',
    '.git/config': 'TODO hidden\n',
    '.bridle/sessions/s.jsonl': 'TODO private\n',
    'image.bin': Buffer.concat([Buffer.from('TODO'), Buffer.from([0, 1, 2])]),
  });
});
afterEach(() => t.cleanup());

const grep = (args: GrepArgs) => grepTool.execute(grepTool.parameters.parse(args), t.ctx);

describe('grep', () => {
  it('prints file:line: text sorted by file then line, skipping binaries, node_modules, .git and bridle home', async () => {
    expect(await grep({ pattern: 'TODO' })).toEqual({
      status: 'ok',
      content: ['a.ts:2: TODO first', 'b.ts:2: // TODO: later', 'src/c.ts:3: TODO deep'].join('\n'),
    });
  });

  it('skips bridle home when it is spelled through a symlink (it was searched: only the spelled path was excluded)', async () => {
    const spelled = path.join(t.root, 'home-alias');
    t.symlink(t.bridleHome, spelled);
    const out = await grepTool.execute({ pattern: 'TODO' }, t.ctxWith({ bridleHome: spelled }));
    expect(out.content).toBe(['a.ts:2: TODO first', 'b.ts:2: // TODO: later', 'src/c.ts:3: TODO deep'].join('\n'));
  });

  it('uses JavaScript RegExp syntax and narrows to a path', async () => {
    expect((await grep({ pattern: '(todo|TODO)\\b', path: 'b.ts' })).content).toBe(
      'b.ts:1: const todo = 1;\nb.ts:2: // TODO: later',
    );
    expect((await grep({ pattern: 'TODO', path: 'src' })).content).toBe('src/c.ts:3: TODO deep');
    expect((await grep({ pattern: 'TODO', path: 'node_modules' })).content).toBe('node_modules/pkg/index.js:1: TODO hidden');
  });

  it('does not read through symlinks leading out', async () => {
    t.write({ [path.join(t.outside, 'secret.txt')]: 'TODO secret\n' });
    t.symlink(t.outside, path.join(t.workspace, 'dirlink'));
    t.symlink(path.join(t.outside, 'secret.txt'), path.join(t.workspace, 'filelink'));
    expect((await grep({ pattern: 'secret' })).content).toBe('No matches for /secret/ in ..');
    expect(await grep({ pattern: 'secret', path: 'dirlink' })).toMatchObject({ code: 'OUTSIDE_WORKSPACE' });
    expect(await grep({ pattern: 'secret', path: 'filelink' })).toMatchObject({ code: 'OUTSIDE_WORKSPACE' });
  });

  it('reports a bad regex and bad paths with stable codes', async () => {
    const bad = await grep({ pattern: 'a(b' });
    expect(bad).toMatchObject({ status: 'error', code: 'INVALID_PATTERN' });
    expect(bad.content).toContain('Invalid regular expression');
    expect(await grep({ pattern: 'x', path: 'nope' })).toMatchObject({ code: 'NOT_FOUND' });
    expect(await grep({ pattern: 'x', path: '../' })).toMatchObject({ code: 'OUTSIDE_WORKSPACE' });
    expect(await grep({ pattern: 'x', path: '.bridle' })).toMatchObject({ code: 'INSIDE_BRIDLE_HOME' });
  });

  it('caps the number of matches', async () => {
    t.write({ 'many.txt': 'hit\n'.repeat(GREP_MAX_MATCHES + 10) });
    const lines = (await grep({ pattern: '^hit$', path: 'many.txt' })).content.split('\n');
    expect(lines).toHaveLength(GREP_MAX_MATCHES + 1);
    expect(lines[0]).toBe('many.txt:1: hit');
    expect(lines.at(-1)).toContain(`stopped at ${GREP_MAX_MATCHES} matches`);
  });

  it('does not report a phantom line after the final newline', async () => {
    t.write({ 'two.txt': 'a\nb\n' });
    expect((await grep({ pattern: '^$', path: 'two.txt' })).content).toBe('No matches for /^$/ in two.txt.');
  });

  describe('a catastrophic pattern (ReDoS)', () => {
    // ^(a+)+$ backtracks exponentially on a run of a's that ends in b: 30 of them take seconds, 40 take hours.
    const evil = { pattern: '^(a+)+$', path: 'evil.txt' };
    const ticking = () => {
      let ticks = 0;
      const timer = setInterval(() => ticks++, 20);
      return { ticks: () => ticks, stop: () => clearInterval(timer) };
    };

    it('does not freeze the event loop: timers fire and the executor deadline ends the call (it once blocked the whole process)', async () => {
      t.write({ 'evil.txt': `${'a'.repeat(30)}b\n` });
      const clock = ticking();
      const started = performance.now();
      const out = await executeTool(grepTool, evil, t.ctx, { timeoutMs: 1000 });
      const took = performance.now() - started;
      clock.stop();
      expect(out).toMatchObject({ status: 'error', code: 'TOOL_TIMEOUT' });
      expect(took).toBeLessThan(2500);
      expect(clock.ticks()).toBeGreaterThanOrEqual(10);
      // The session goes on: the next search answers.
      expect(await grep({ pattern: 'TODO', path: 'a.ts' })).toEqual({ status: 'ok', content: 'a.ts:2: TODO first' });
    });

    it("ends at grep's own deadline with GREP_TIMEOUT, keeping the matches found before it", async () => {
      t.write({ 'evil/1.txt': 'aaa\n', 'evil/2.txt': `${'a'.repeat(40)}b\n` });
      const tool = grepModule.createGrepTool({ deadlineMs: 500 });
      const clock = ticking();
      const started = performance.now();
      const out = await tool.execute({ pattern: evil.pattern, path: 'evil' }, t.ctx);
      const took = performance.now() - started;
      clock.stop();
      expect(out.code).toBe('GREP_TIMEOUT');
      expect(out.content).toContain('500 ms');
      expect(out.content).toContain('evil/1.txt:1: aaa');
      expect(took).toBeGreaterThanOrEqual(450);
      expect(took).toBeLessThan(2000);
      expect(clock.ticks()).toBeGreaterThanOrEqual(5);
    });
  });

  it("keeps its own deadline when a GC runs mid-call (Node 20 collected AbortSignal.timeout inside AbortSignal.any, so only the executor's deadline ended the call)", async () => {
    // `--expose-gc` set at run time, so vitest needs no flag; `gc` is then a global of every new context.
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as () => void;
    t.write({ 'evil.txt': `${'a'.repeat(40)}b\n` });
    const tool = grepModule.createGrepTool({ deadlineMs: 300 });
    const collecting = setInterval(gc, 25);
    const started = performance.now();
    try {
      const out = await executeTool(tool, { pattern: '^(a+)+$', path: 'evil.txt' }, t.ctx, { timeoutMs: 4000 });
      const took = performance.now() - started;
      expect(out).toMatchObject({ status: 'error', code: 'GREP_TIMEOUT' });
      expect(took).toBeLessThan(2000);
    } finally {
      clearInterval(collecting);
    }
  });

  it('is read-only and presents in one line', () => {
    expect(grepTool.readOnly).toBe(true);
    expect(grepTool.present({ pattern: 'foo', path: 'src' })).toBe('grep /foo/ in src');
  });
});
