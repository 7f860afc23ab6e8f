/**
 * The `process` subagent provider through the real CLI: the parent `bridle
 * run` delegates to a child `bridle serve` process it drives over JSON-RPC;
 * the child's log is a bridle log beside the parent's, linked by id. A child
 * process that dies is a failed result (`SUBAGENT_CRASHED`), never a hang.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Entry } from '../../log/entries.js';
import { verifyLog } from '../../log/verify.js';
import { CLI, runCli } from '../helpers/cli.js';
import { notesWorld, type NotesWorld } from '../helpers/cli-world.js';

const world = () => notesWorld('bridle-proc-');

const patchFor = (w: NotesWorld, args: string[]) => w.file('patch.json', { patch: [{ insert: true, id: 'subagent:process', use: 'process', config: { bridle: CLI, args } }] });

describe('the process subagent provider', () => {
  it('delegates to a child bridle process over JSON-RPC; its log is a bridle log beside the parent\'s, at depth 1, under approval never', async () => {
    const w = world();
    const parentScript = w.file('parent.json', {
      label: 'scripted: the parent delegates to a process',
      responses: [{ toolCalls: [{ name: 'delegate', arguments: { task: 'What do the notes say?', provider: 'process' } }] }, { text: 'The child process says: 42.' }],
    });
    const childScript = w.file('child.json', {
      label: 'scripted: the child process reads the notes',
      responses: [{ toolCalls: [{ name: 'read_file', arguments: { path: 'notes.txt' } }, { name: 'write_file', arguments: { path: '.git/x.txt', content: 'no' } }] }, { text: 'The notes say the answer is 42.' }],
    });
    const patch = patchFor(w, ['--model', `scripted:${childScript}`]);
    const r = await runCli(['run', '--model', `scripted:${parentScript}`, '--cwd', w.ws, '--approval', 'auto', '--sandbox', 'off', '--max-depth', '1', '--patch', patch, 'ask a child'], { env: { BRIDLE_HOME: w.home } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('The child process says: 42.');
    const [[parentId, parent], [childId, child]] = [...w.logs().entries()] as [[string, Entry[]], [string, Entry[]]];
    expect(childId).toBe(`${parentId}.t1.s1.c1`);
    expect(child[0]).toMatchObject({ kind: 'session/start', depth: 1, parent: parentId });
    expect(parent.find((e) => e.kind === 'subagent/start')).toMatchObject({ child: childId, mode: 'process', depth: 1 });
    expect(parent.find((e) => e.kind === 'subagent/end')).toMatchObject({ child: childId, reason: 'completed' });
    expect(parent.find((e) => e.kind === 'tool/result' && e.name === 'delegate')).toMatchObject({ status: 'ok', content: expect.stringContaining('The notes say the answer is 42.') });
    // The child runs under never, whatever the parent's: its .git write, beyond the confinement, was refused by name (ADR 0052).
    expect(child.find((e) => e.kind === 'tool/result' && e.name === 'write_file')).toMatchObject({ status: 'denied', content: expect.stringContaining('GIT_WRITE') });
    for (const log of [parent, child]) expect(verifyLog(log).violations).toEqual([]);
    const replay = await runCli(['replay', join(w.home, 'sessions', `${parentId}.jsonl`), '--machines'], { env: { BRIDLE_HOME: w.home } });
    expect(replay.code, replay.stdout + replay.stderr).toBe(0);
  }, 60_000);

  it('a child process that dies mid-turn is a failed result with a named code (SUBAGENT_CRASHED), and the parent carries on', async () => {
    const w = world();
    const parentScript = w.file('parent.json', {
      label: 'scripted: the parent delegates, then reads what became of it',
      responses: [{ toolCalls: [{ name: 'delegate', arguments: { task: 'Take your time.', provider: 'process' } }] }, { text: 'The child is gone; I carry on.' }],
    });
    const childScript = w.file('child.json', { label: 'scripted: a slow child', responses: [{ text: 'too late' }] });
    const childPatch = w.file('child-patch.json', { patch: [{ id: 'model', use: 'scripted', config: { file: childScript, delayMs: 60_000 } }] });
    const patch = patchFor(w, ['--patch', childPatch]);
    const run = runCli(['run', '--model', `scripted:${parentScript}`, '--cwd', w.ws, '--sandbox', 'off', '--max-depth', '1', '--patch', patch, 'go'], { env: { BRIDLE_HOME: w.home } });
    // Find the child server by its command line (its patch file is this test's own) and kill it once its turn runs.
    let pid: number | undefined;
    for (let i = 0; i < 200 && pid === undefined; i++) {
      await new Promise((res) => setTimeout(res, 100));
      const logs = (() => {
        try {
          return w.logs();
        } catch {
          return new Map<string, Entry[]>();
        }
      })();
      const child = [...logs.values()][1];
      if (!child?.some((e) => e.kind === 'step/start')) continue;
      const out = execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' });
      const line = out.split('\n').find((l) => l.includes(childPatch) && l.includes(' serve '));
      if (line) pid = Number(line.trim().split(/\s+/)[0]);
    }
    expect(pid, 'the child server process').toBeDefined();
    process.kill(pid!, 'SIGKILL');
    const r = await run;
    expect(r.code, r.stderr).toBe(0);
    const [parent] = [...w.logs().values()];
    expect(parent!.find((e) => e.kind === 'tool/result' && e.name === 'delegate')).toMatchObject({ status: 'error', code: 'SUBAGENT_CRASHED' });
    expect(parent!.find((e) => e.kind === 'subagent/end')).toMatchObject({ reason: 'error', code: 'SUBAGENT_CRASHED' });
    expect(r.stdout).toContain('The child is gone; I carry on.');
    expect(verifyLog(parent!).violations).toEqual([]);
  }, 60_000);
});
