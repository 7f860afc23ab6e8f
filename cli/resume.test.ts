import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { parseLog } from '../log/parse.js';
import { verifyLog } from '../log/verify.js';
import { LogBuilder, logText } from '../test/helpers/log-builder.js';
import { continueNote, resumeCommand } from './resume.js';
import { tempDir } from '../test/helpers/temp.js';

let dir: string;
let file: string;
let err = '';
const sink = { write: (s: string) => (err += s) };
beforeEach(() => {
  dir = tempDir('bridle-resume-');
  file = path.join(dir, 's.jsonl');
  err = '';
  vi.stubEnv('BRIDLE_HOME', path.join(dir, 'home'));
});
afterEach(() => {
  vi.unstubAllEnvs();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('bridle resume', () => {
  it('with neither a prompt nor --continue, only repairs and says how to go on', async () => {
    fs.writeFileSync(file, logText(new LogBuilder().cleanTurn().startTurn().startStep().answer('', [{ name: 'bash' }]).dispatch(1).entries));
    expect(await resumeCommand(file, undefined, {}, sink)).toBe(0);
    expect(err).toMatch(/repaired: turn t2 never ended; step t2.s1 was open; outcome unknown: t2.s1.c1 \(bash\)/);
    expect(err).toMatch(/--continue/);
    expect(verifyLog(parseLog(fs.readFileSync(file, 'utf8')).entries).violations).toEqual([]);
  });

  it('refuses, with exit 2, a log that is corrupt rather than cut short', async () => {
    const e = new LogBuilder().cleanTurn().startTurn().entries;
    e.splice(2, 1);
    const text = logText(e);
    fs.writeFileSync(file, text);
    expect(await resumeCommand(file, undefined, {}, sink)).toBe(2);
    expect(err).toMatch(/corrupt, not just cut short; refusing to repair it: seq-gap at seq 4/);
    expect(fs.readFileSync(file, 'utf8')).toBe(text);
  });

  it('repairs the child a crash left open with its parent; a child log that cannot be repaired is named and the exit is 2', async () => {
    const parent = () =>
      new LogBuilder().startTurn().startStep().answer('', [{ name: 'delegate', args: { task: 'x' } }]).dispatch(1).add({ kind: 'subagent/start', callId: 't1.s1.c1', child: 's.t1.s1.c1', depth: 1, mode: 'spawn' });
    const childFile = path.join(dir, 's.t1.s1.c1.jsonl');
    fs.writeFileSync(file, logText(parent().entries));
    fs.writeFileSync(childFile, logText(new LogBuilder().startTurn().startStep().entries));
    expect(await resumeCommand(file, undefined, {}, sink)).toBe(0);
    expect(err).toMatch(/repaired: subagent s\.t1\.s1\.c1: turn t1 never ended; step t1\.s1 was open/);
    expect(verifyLog(parseLog(fs.readFileSync(childFile, 'utf8')).entries).violations).toEqual([]);
    err = '';
    fs.writeFileSync(file, logText(parent().entries));
    fs.writeFileSync(childFile, '{oops\n');
    expect(await resumeCommand(file, 'go on', {}, sink)).toBe(2);
    expect(err).toMatch(/subagent log .*s\.t1\.s1\.c1\.jsonl is corrupt or unreadable; refusing to repair it: bad-json at line 1/);
    expect(err).toMatch(/the session itself was repaired, nothing was run/);
    expect(verifyLog(parseLog(fs.readFileSync(file, 'utf8')).entries).violations).toEqual([]);
  });

  it('an empty log (claimed, never committed) is no session to resume, not a corrupt one', async () => {
    fs.writeFileSync(file, '');
    await expect(resumeCommand(file, undefined, {}, sink)).rejects.toThrow(`no session log at ${file}`);
    expect(err).toBe('');
  });

  it('a prompt and --continue together are a usage error', async () => {
    await expect(resumeCommand(file, 'x', { continue: true }, sink)).rejects.toThrow(/not both/);
  });

  it('the continue note names what never ran and what is unknown, and asks to check before re-running', () => {
    const note = continueNote({ turn: 't2', notStarted: ['t2.s1.c2'], outcomeUnknown: [{ callId: 't2.s1.c1', name: 'bash', idempotent: false }], unlogged: [], compaction: false, subagents: [], linked: [] });
    expect(note).toMatch(/Never started .*t2\.s1\.c2/);
    expect(note).toMatch(/Outcome unknown .*t2\.s1\.c1 bash/);
    expect(note).toMatch(/Re-run only read-only or idempotent work; for anything else, check the current state first/);
  });

  it("repair lines show an escape sequence in a logged tool name visibly", async () => {
    fs.writeFileSync(file, logText(new LogBuilder().cleanTurn().startTurn().startStep().answer('', [{ name: 'bash\x1b[2K\r' }]).dispatch(1).entries));
    expect(await resumeCommand(file, undefined, {}, sink)).toBe(0);
    expect(err).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    expect(err).toContain('outcome unknown: t2.s1.c1 (bash␛[2K␍)');
  });
});
