/**
 * `bridle fork` as a user runs it (ADR 0029): fork a golden log, go on in the
 * fork with a new prompt, replay it. The scripted model holds one answer, for
 * a request whose history begins with the original's prompt: a repeated model
 * call would exhaust it, and a re-run tool would show in the fork's log.
 */
import { copyFileSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Entry } from '../../log/entries.js';
import { parseLog } from '../../log/parse.js';
import { runCli } from '../helpers/cli.js';
import { tempWorld } from '../helpers/cli-world.js';

const GOLDEN = join(import.meta.dirname, '../golden/schedule.jsonl');

describe('bridle fork, then bridle run --session <fork>', () => {
  it('a fork runs like any session without re-running tools or repeating model calls', async () => {
    const { root, home, ws } = tempWorld('bridle-fork-e2e-');
    const env = { BRIDLE_HOME: home };
    const original = join(root, 'schedule.jsonl');
    copyFileSync(GOLDEN, original);
    const before = readFileSync(original, 'utf8');

    const forked = await runCli(['fork', original], { env });
    expect(forked.stderr).toMatch(/forked: \S+ up to seq 25 as \S+; nothing was re-run/);
    expect(forked.code).toBe(0);
    const fork = /^log: (.*)$/m.exec(forked.stdout)![1]!;
    expect(forked.stdout).toBe(`log: ${fork}\n`);

    const script = join(root, 'what-if.json');
    writeFileSync(script, JSON.stringify({ responses: [{ match: 'total the cart into total.txt', text: 'What if: the total would be the same.' }] }));
    const run = await runCli(['run', '--session', fork, '--cwd', ws, '--model', `scripted:${script}`, '--approval', 'auto', '--sandbox', 'off', 'what if the cart were empty?'], { env });
    expect(run.stderr).toContain(`log: ${fork}`);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('What if: the total would be the same.');

    const original25 = before.split('\n').slice(1, 25);
    const text = readFileSync(fork, 'utf8');
    expect(text.split('\n').slice(1, 25)).toEqual(original25);
    const added: Entry[] = parseLog(text).entries.slice(25);
    expect(added.map((e) => e.kind)).toEqual(['session/reopen', 'session/input', 'turn/start', 'user/message', 'step/start', 'request/header', 'assistant/message', 'step/end', 'turn/end', 'checkpoint']);
    // Nothing ran in the workspace: the original's reads and write are outcomes in the log, not re-run.
    expect(readdirSync(ws)).toEqual([]);
    expect(readFileSync(original, 'utf8')).toBe(before);

    const replay = await runCli(['replay', fork, '--machines'], { env });
    expect(replay.stdout).toMatch(/forked from: \S+ at seq 25/);
    expect(replay.stdout).toMatch(/machines: replays byte for byte/);
    expect(replay.code).toBe(0);
    const parent = await runCli(['replay', original], { env });
    expect(parent.stdout).toMatch(/forks of this session: \S+ \(at seq 25\)/);
  });
});

describe('bridle fork --answer, then bridle resume --continue', () => {
  it('--answer re-answers one logged approval: rejected → approved, the call runs once in the fork and never in the original', async () => {
    const { root, home, ws } = tempWorld('bridle-whatif-e2e-');
    const env = { BRIDLE_HOME: home };
    const original = join(root, 'approvals.jsonl');
    copyFileSync(join(import.meta.dirname, '../golden/approvals.jsonl'), original);
    const before = readFileSync(original, 'utf8');
    // seq 18: a person answered no to `touch note.txt` (t1.s2.c1); it never ran.
    expect(before.split('\n')[17]).toContain('"outcome":"rejected"');

    const forked = await runCli(['fork', original, '--at', '18', '--answer', 'approve'], { env });
    expect(forked.code).toBe(0);
    const fork = /^log: (.*)$/m.exec(forked.stdout)![1]!;
    expect(forked.stderr).toContain(`go on: bridle resume ${fork} --continue`);

    const script = join(root, 'continue.json');
    writeFileSync(script, JSON.stringify({ responses: [{ text: 'Running the approved call.', toolCalls: [{ name: 'bash', arguments: { command: 'touch note.txt' } }] }, { text: 'note.txt is there now.' }] }));
    // No terminal, so a call that asked would be denied: the fork's answer is what lets it run.
    const resumed = await runCli(['resume', fork, '--continue', '--cwd', ws, '--model', `scripted:${script}`, '--approval', 'ask', '--sandbox', 'off'], { env });
    expect(resumed.stderr).toMatch(/repaired: .*never started: t1\.s2\.c1/i);
    expect(resumed.code).toBe(0);
    expect(readdirSync(ws)).toEqual(['note.txt']);

    const entries = parseLog(readFileSync(fork, 'utf8')).entries;
    const note = entries.find((e): e is Extract<Entry, { kind: 'user/message' }> => e.kind === 'user/message' && e.origin === 'resume');
    expect(note?.text).toContain('t1.s2.c1 (bash {"command":"touch note.txt"}) is approved: it has not run yet');
    const touches = entries.filter((e) => e.kind === 'tool/call' && e.arguments.includes('touch note.txt'));
    const dispatched = entries.filter((e) => e.kind === 'tool/dispatch' && touches.some((t) => t.kind === 'tool/call' && t.callId === e.callId));
    expect(dispatched.map((e) => (e as { callId: string }).callId)).toEqual(['t2.s1.c1']);
    expect(entries.some((e) => e.kind === 'approval/asked' && e.callId === 't2.s1.c1')).toBe(false);
    // The original: still rejected, never dispatched, byte for byte as it was.
    expect(readFileSync(original, 'utf8')).toBe(before);
    expect(parseLog(before).entries.some((e) => e.kind === 'tool/dispatch' && e.callId === 't1.s2.c1')).toBe(false);
    const replay = await runCli(['replay', fork], { env });
    expect(replay.code).toBe(0);
  });
});
