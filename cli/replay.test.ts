import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../test/helpers/cli.js';
import { LogBuilder, logText } from '../test/helpers/log-builder.js';
import { replayCommand } from './replay.js';
import { summarize, timelineLine } from './timeline.js';
import { tempDir } from '../test/helpers/temp.js';

let dir: string;
let file: string;
beforeEach(() => {
  dir = tempDir('bridle-replay-');
  file = path.join(dir, 's.jsonl');
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

async function replay(text: string, json = false): Promise<{ code: number; out: string }> {
  fs.writeFileSync(file, text);
  let out = '';
  const code = await replayCommand(file, { json }, { write: (s: string) => (out += s) });
  return { code, out };
}

describe('bridle replay', () => {
  it('prints one line per entry, then totals; exit 0 on a clean log', async () => {
    const b = new LogBuilder().cleanTurn();
    const { code, out } = await replay(logText(b.entries));
    expect(code).toBe(0);
    const lines = out.split('\n');
    expect(lines).toHaveLength(b.entries.length + 4);
    expect(lines[8]).toMatch(/^\s+9\s+t1\.s1\s+tool\/result\s+c1 ok: done$/);
    expect(out).toContain('turns 1 (completed 1) · steps 2 · calls 1 (ok 1) · retries 0 · repairs 0 · checkpoints 0');
    expect(out).toMatch(/ok: .* verifies \(14 entries\)/);
  });

  it('--json prints the verdict; exit 2 names the violation and its seq', async () => {
    const e = new LogBuilder().cleanTurn().entries;
    e.splice(4, 1);
    const { code, out } = await replay(logText(e), true);
    expect(code).toBe(2);
    const v = JSON.parse(out) as { ok: boolean; violations: { violation: string; seq: number }[]; totals: object };
    expect(v.ok).toBe(false);
    expect(v.violations[0]).toMatchObject({ violation: 'seq-gap', seq: 6 });
    expect(v.totals).toMatchObject({ turns: 1 });
  });

  it('a torn last line: exit 2, "torn tail", repairable by resume', async () => {
    const { code, out } = await replay(`${logText(new LogBuilder().cleanTurn().entries)}{"seq":15,"ki`);
    expect(code).toBe(2);
    expect(out).toMatch(/repairable: torn-tail at line 15: torn tail: .*repairable by `bridle resume`/);
  });

  it('a bad line mid-log: exit 2 naming the line; the timeline stops before it', async () => {
    const lines = logText(new LogBuilder().cleanTurn().entries).split('\n');
    lines[3] = '{oops';
    const { code, out } = await replay(lines.join('\n'));
    expect(code).toBe(2);
    expect(out).toMatch(/corrupt: bad-json at line 4: /);
    expect(out.split('\n').filter((l) => /^\s+\d+\s/.test(l))).toHaveLength(3);
  });

  describe('--machines', () => {
    const golden = fs.readFileSync(new URL('../test/golden/ctrl-c.jsonl', import.meta.url), 'utf8');
    const run = async (text: string, json = false) => {
      fs.writeFileSync(file, text);
      let out = '';
      const code = await replayCommand(file, { machines: true, json }, { write: (s: string) => (out += s) });
      return { code, out };
    };

    it('a recorded CLI run replays byte for byte: exit 0', async () => {
      const { code, out } = await run(golden);
      expect(out).toMatch(/machines: replays byte for byte \(22 entries\)/);
      expect(code).toBe(0);
    });

    it('an entry the machines would not write: exit 2, the first differing line, both versions', async () => {
      const { code, out } = await run(golden.replace('"name":"list_dir","idempotent":true', '"name":"list_dir","idempotent":false'));
      expect(code).toBe(2);
      expect(out).toMatch(/machines: differs at line 9\n {2}logged: {3}.*"idempotent":false.*\n {2}replayed: .*"idempotent":true/);
    });

    it('a real delegating run (bridle run --max-depth 1): the parent log and the child log both replay byte for byte', async () => {
      const home = path.join(dir, 'home');
      const ws = path.join(dir, 'ws');
      fs.mkdirSync(ws);
      fs.writeFileSync(path.join(ws, 'README.md'), '# hi\n');
      const script = path.join(dir, 'script.json');
      const responses = [
        { toolCalls: [{ name: 'delegate', arguments: { task: 'What files are in the workspace?' } }] },
        { toolCalls: [{ name: 'list_dir', arguments: {} }] },
        { text: 'There is one file, README.md.' },
        { text: 'The subagent found README.md.' },
      ];
      fs.writeFileSync(script, JSON.stringify({ label: 'scripted: delegation (parent and child share this script)', responses }));
      const env = { BRIDLE_HOME: home };
      const run = await runCli(['run', '--model', `scripted:${script}`, '--cwd', ws, '--approval', 'auto', '--sandbox', 'off', '--max-depth', '1', 'look around'], { env });
      expect(run.code, run.stderr).toBe(0);
      const logs = fs.readdirSync(path.join(home, 'sessions')).sort((a, b) => a.length - b.length);
      expect(logs).toHaveLength(2);
      for (const log of logs) {
        const r = await runCli(['replay', path.join(home, 'sessions', log), '--machines'], { env });
        expect(r.stdout, log).toMatch(/machines: replays byte for byte/);
        expect(r.code, log).toBe(0);
      }
    });

    it('tools other than the built-in ones: not replayable, exit 2; --json carries the verdict', async () => {
      const { code, out } = await run(golden.replace('"description":"Read a text file from the workspace.', '"description":"Read a file.'), true);
      expect(code).toBe(2);
      const v = JSON.parse(out) as { ok: boolean; machines: { identical: boolean; notReplayable?: string } };
      expect(v.ok).toBe(false);
      expect(v.machines.notReplayable).toMatch(/differing or missing: read_file/);
    });
  });

  it('summaries stay on one line', () => {
    const b = new LogBuilder().startTurn('a\nmultiline\ninput');
    for (const e of b.entries) expect(timelineLine(e)).not.toContain('\n');
    expect(summarize(b.entries[1]!)).toBe('followup: "a multiline input"');
    expect(summarize(b.entries[2]!)).toBe('"a multiline input" (input 2)');
  });

  it('a verdict quoting a forged kind with a C1 control shows it visibly, and --json escapes it', async () => {
    const e = new LogBuilder().cleanTurn().entries;
    const text = `${logText(e)}${JSON.stringify({ seq: e.length + 1, at: e[0]!.at, kind: 'evil\u009b2J\u202e' })}\n`;
    const human = await replay(text);
    expect(human.code).toBe(2);
    expect(human.out).not.toMatch(/[\u007f-\u009f\u202a-\u202e]/);
    expect(human.out).toContain('evil⟨U+009B⟩2J⟨U+202E⟩');
    const json = await replay(text, true);
    expect(json.out).not.toMatch(/[\u007f-\u009f\u202a-\u202e]/);
    expect(JSON.parse(json.out).violations[0].message).toContain('evil\u009b2J\u202e');
  });
});
