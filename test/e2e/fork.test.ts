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
import { deriveMessages } from '../../log/derive-messages.js';
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
    const run = await runCli(['run', '--session', fork, '--cwd', ws, '--move-workspace', '--model', `scripted:${script}`, '--approval', 'auto', '--sandbox', 'off', 'what if the cart were empty?'], { env });
    expect(run.stderr).toContain(`log: ${fork}`);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('What if: the total would be the same.');

    const original25 = before.split('\n').slice(1, 25);
    const text = readFileSync(fork, 'utf8');
    expect(text.split('\n').slice(1, 25)).toEqual(original25);
    const added: Entry[] = parseLog(text).entries.slice(25);
    expect(added.map((e) => e.kind)).toEqual(['session/reopen', 'session/policy', 'session/input', 'turn/start', 'user/message', 'step/start', 'request/header', 'assistant/message', 'step/end', 'turn/end', 'checkpoint']);
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

describe('bridle fork --answer, then bridle resume: the re-answered turn goes on (ADR 0031); an approve is asked again (ADR 0038)', () => {
  const kinds = (es: readonly Entry[]) => es.map((e) => e.kind);

  /** `bridle fork <original> --at <seq> --answer <answer>`, then `bridle resume <fork>` with one scripted reply, `--approval <approval>` and no terminal. */
  async function forkAnswerResume(w: { root: string; ws: string; env: NodeJS.ProcessEnv }, original: string, at: number, answer: string, reply: string, approval = 'ask') {
    const forked = await runCli(['fork', original, '--at', String(at), '--answer', answer], { env: w.env });
    expect(forked.code).toBe(0);
    const fork = /^log: (.*)$/m.exec(forked.stdout)![1]!;
    const next = join(w.root, 'next.json');
    writeFileSync(next, JSON.stringify({ responses: [{ text: reply }] }));
    const resumed = await runCli(['resume', fork, '--cwd', w.ws, '--move-workspace', '--model', `scripted:${next}`, '--approval', approval, '--sandbox', 'off'], { env: w.env });
    return { forked, fork, next, resumed };
  }

  /** The original: the model asks to append to a marker; the owner's answer is no (no terminal: unavailable), so it never runs. */
  async function refusedOriginal(w: { root: string; ws: string; env: NodeJS.ProcessEnv }) {
    const first = join(w.root, 'first.json');
    writeFileSync(first, JSON.stringify({ responses: [{ text: 'Marking.', toolCalls: [{ name: 'bash', arguments: { command: 'echo ran >> marker.txt' } }] }, { text: 'It was not allowed.' }] }));
    const ran = await runCli(['run', '--cwd', w.ws, '--model', `scripted:${first}`, '--approval', 'ask', '--sandbox', 'off', 'mark the workspace'], { env: w.env });
    expect(ran.code).toBe(0);
    const original = /log: (\S+)/.exec(ran.stderr)![1]!;
    const before = readFileSync(original, 'utf8');
    const decided = parseLog(before).entries.find((e): e is Extract<Entry, { kind: 'approval/decided' }> => e.kind === 'approval/decided')!;
    expect(decided).toMatchObject({ callId: 't1.s1.c1', outcome: 'unavailable' });
    return { original, before, decided };
  }

  it('bridle fork --answer approve at the owner\'s refusal never runs the call by itself: resume asks it again (no terminal: not run), --approval never refuses it', async () => {
    const { root, home, ws } = tempWorld('bridle-whatif-approve-');
    const env = { BRIDLE_HOME: home };
    const w = { root, ws, env };
    const { original, before, decided } = await refusedOriginal(w);

    const { forked, fork, next, resumed } = await forkAnswerResume(w, original, decided.seq, 'approve', 'It still was not allowed.');
    expect(forked.stderr).toContain(`the approval at seq ${decided.seq} is left unanswered: t1.s1.c1 is asked again when the fork goes on, not approved by the fork`);
    expect(forked.stderr).toContain(`go on: bridle resume ${fork} (asks for t1.s1.c1 again: answer it at the terminal under --approval ask; --approval never refuses it)`);
    expect(resumed.stderr).toContain('pending: a call waiting on an approval when the session stopped (t1.s1.c1), asked again now; nothing of it ran');
    expect(resumed.stderr).not.toContain('decided:');
    expect(resumed.code).toBe(0);
    expect(readdirSync(ws)).toEqual([]);
    const entries = parseLog(readFileSync(fork, 'utf8')).entries;
    const added = entries.slice(decided.seq - 1);
    // Asked again through the ordinary approval path, answered by whoever may answer (here: nobody, so unavailable), never by the fork.
    expect(kinds(added)).toEqual(['session/reopen', 'approval/asked', 'approval/decided', 'tool/result', 'step/end', 'step/start', 'request/header', 'assistant/message', 'step/end', 'turn/end', 'checkpoint']);
    expect(added[2]).toMatchObject({ kind: 'approval/decided', callId: 't1.s1.c1', outcome: 'unavailable' });
    expect(added[3]).toMatchObject({ kind: 'tool/result', callId: 't1.s1.c1', status: 'denied' });
    expect(entries.some((e) => e.kind === 'tool/dispatch' || (e.kind === 'approval/decided' && e.by === 'fork'))).toBe(false);
    expect(readFileSync(original, 'utf8')).toBe(before);
    const replay = await runCli(['replay', fork, '--machines'], { env });
    expect(replay.stdout).toMatch(/machines: replays byte for byte/);
    expect(replay.code).toBe(0);

    // Under --approval never the same fork's call is refused by the policy: nothing asked, nothing run.
    const never = await forkAnswerResume(w, original, decided.seq, 'approve', 'Refused.', 'never');
    expect(never.resumed.code).toBe(0);
    const refused = parseLog(readFileSync(never.fork, 'utf8')).entries.slice(decided.seq - 1);
    // The narrower policy is logged as such (ADR 0027), then the call is denied by it.
    expect(kinds(refused).slice(0, 3)).toEqual(['session/reopen', 'session/policy', 'tool/result']);
    expect(refused[2]).toMatchObject({ callId: 't1.s1.c1', status: 'denied', content: expect.stringContaining('approval policy "never"') });
    expect(readdirSync(ws)).toEqual([]);
    // Resumed again, the fork is at rest: nothing runs.
    const again = await runCli(['resume', fork, '--cwd', ws, '--move-workspace', '--model', `scripted:${next}`, '--approval', 'ask', '--sandbox', 'off'], { env });
    expect(again.code).toBe(0);
    expect(readdirSync(ws)).toEqual([]);
  });

  it('--answer deny continues the turn with the denial the model sees', async () => {
    const { root, home, ws } = tempWorld('bridle-whatif-deny-');
    const env = { BRIDLE_HOME: home };
    const original = join(root, 'approvals.jsonl');
    copyFileSync(join(import.meta.dirname, '../golden/approvals.jsonl'), original);
    const before = readFileSync(original, 'utf8');
    // seq 25: a person allowed `echo hello` (t1.s3.c1) always; it ran.
    expect(before.split('\n')[24]).toContain('"outcome":"allowed-always"');

    // No terminal: were the call asked again, it would be denied as unavailable, not rejected — the logged no is what the model is told.
    const { forked, fork, resumed } = await forkAnswerResume({ root, ws, env }, original, 25, 'deny', 'Understood: echo was denied, so I stop here.');
    expect(forked.stderr).toContain(`go on: bridle resume ${fork} (the answered turn goes on with this answer)`);
    expect(resumed.stderr).toContain('decided: t1.s3.c1 rejected');
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toContain('Understood: echo was denied');

    const entries = parseLog(readFileSync(fork, 'utf8')).entries;
    const added = entries.slice(25);
    expect(kinds(added)).toEqual(['session/reopen', 'session/policy', 'tool/result', 'step/end', 'step/start', 'request/header', 'assistant/message', 'step/end', 'turn/end', 'checkpoint']);
    expect(added[2]).toMatchObject({ kind: 'tool/result', callId: 't1.s3.c1', status: 'denied', content: 'Denied: approval rejected. The call did not run.' });
    expect(entries.some((e) => e.kind === 'tool/dispatch' && e.callId === 't1.s3.c1')).toBe(false);
    // What the model was sent for its next step (built from the log alone, I1): the denial, right after its call.
    const step = entries.findIndex((e) => e.kind === 'step/start' && e.step === 't1.s4');
    const seen = deriveMessages(entries.slice(0, step + 1));
    expect(seen.at(-1)).toMatchObject({ role: 'tool', content: expect.stringContaining('Denied: approval rejected') });
    expect(entries.find((e) => e.kind === 'turn/end')).toMatchObject({ turn: 't1', reason: 'completed', steps: 4 });
    expect(readFileSync(original, 'utf8')).toBe(before);
    const replay = await runCli(['replay', fork, '--machines'], { env });
    expect(replay.stdout).toMatch(/machines: replays byte for byte/);
    expect(replay.code).toBe(0);
  });

  it('bridle run --session <fork> of a what-if approve goes on with that turn first, asking the call again (no terminal: denied), then runs its prompt as the next turn', async () => {
    const { root, home, ws } = tempWorld('bridle-whatif-run-');
    const env = { BRIDLE_HOME: home };
    const original = join(root, 'approvals.jsonl');
    copyFileSync(join(import.meta.dirname, '../golden/approvals.jsonl'), original);
    // seq 18: `touch note.txt` (t1.s2.c1) was rejected; a what-if approve leaves it to be asked again.
    const forked = await runCli(['fork', original, '--at', '18', '--answer', 'approve'], { env });
    const fork = /^log: (.*)$/m.exec(forked.stdout)![1]!;
    const script = join(root, 'run.json');
    writeFileSync(script, JSON.stringify({ responses: [{ text: 'note.txt is not touched.' }, { text: 'Nothing else to do.' }] }));
    const ran = await runCli(['run', '--session', fork, '--cwd', ws, '--move-workspace', '--model', `scripted:${script}`, '--approval', 'ask', '--sandbox', 'off', 'anything else?'], { env });
    expect(ran.code).toBe(0);
    expect(readdirSync(ws)).toEqual([]);
    const entries = parseLog(readFileSync(fork, 'utf8')).entries;
    expect(entries.filter((e) => e.kind === 'turn/end').map((e) => [e.turn, e.reason])).toEqual([['t1', 'completed'], ['t2', 'completed']]);
    expect(entries.filter((e) => e.kind === 'approval/asked' && e.callId === 't1.s2.c1')).toHaveLength(2);
    expect(entries.find((e) => e.kind === 'tool/result' && e.callId === 't1.s2.c1')).toMatchObject({ status: 'denied' });
    expect(entries.find((e) => e.kind === 'turn/start' && e.turn === 't2')).toMatchObject({ input: 'anything else?' });
    const replay = await runCli(['replay', fork, '--machines'], { env });
    expect(replay.stdout).toMatch(/machines: replays byte for byte/);
  });
});
