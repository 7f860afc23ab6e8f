/** `bridle run --max-depth N`: delegated tasks run as child sessions, each with a log of its own beside the parent's. */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Entry } from '../../log/entries.js';
import { parseLog } from '../../log/parse.js';
import { verifyLog } from '../../log/verify.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

function world() {
  const root = tempDir('bridle-sub-');
  const home = join(root, 'home');
  const ws = join(root, 'ws');
  mkdirSync(ws);
  writeFileSync(join(ws, 'README.md'), '# hi\n');
  const script = (name: string, body: object) => {
    const file = join(root, name);
    writeFileSync(file, JSON.stringify(body));
    return file;
  };
  const logs = (): Map<string, Entry[]> => {
    const dir = join(home, 'sessions');
    return new Map(readdirSync(dir).sort((a, b) => a.length - b.length).map((f) => [f.replace(/\.jsonl$/, ''), parseLog(readFileSync(join(dir, f), 'utf8')).entries]));
  };
  return { root, home, ws, script, logs };
}

const delegate = (task: string) => ({ toolCalls: [{ name: 'delegate', arguments: { task } }] });

describe('bridle run with subagents', () => {
  it('delegates to a child session (depth 1, approval never) and logs both', async () => {
    const w = world();
    const script = w.script('script.json', {
      label: 'scripted: delegation (parent and child share this script, in request order)',
      responses: [
        delegate('What files are in the workspace?'),
        { toolCalls: [{ name: 'list_dir', arguments: {} }, { name: 'bash', arguments: { command: 'touch hacked' } }] },
        { text: 'There is one file, README.md.' },
        { text: 'The subagent found README.md.' },
      ],
    });
    const r = await runCli(['run', '--model', `scripted:${script}`, '--cwd', w.ws, '--approval', 'auto', '--sandbox', 'off', '--max-depth', '1', 'look around'], { env: { BRIDLE_HOME: w.home } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('The subagent found README.md.');
    const [parent, child] = [...w.logs().values()];
    expect(verifyLog(parent!).violations).toEqual([]);
    expect(verifyLog(child!).violations).toEqual([]);
    expect(child![0]).toMatchObject({ kind: 'session/start', depth: 1 });
    expect(parent!.filter((e) => e.kind.startsWith('subagent/')).map((e) => e.kind)).toEqual(['subagent/start', 'subagent/end']);
    // The parent runs under auto, the child under never: its bash was denied, not run.
    expect(child!.find((e) => e.kind === 'tool/result' && e.name === 'bash')).toMatchObject({ status: 'denied' });
    expect(readdirSync(w.ws)).toEqual(['README.md']);
  });

  it('bridle run --max-depth 3 with a model that delegates three levels deep completes, and a fourth level is refused before a child exists — also after a resume', async () => {
    const w = world();
    const script = w.script('deep.json', {
      label: 'scripted: three levels of delegation (every level shares this script, in request order)',
      responses: [delegate('level 1'), delegate('level 2'), delegate('level 3'), delegate('level 4'), { text: 'level 3: I was refused level 4' }, { text: 'level 2 done' }, { text: 'level 1 done' }, { text: 'root: all three levels reported' }],
    });
    const r = await runCli(['run', '--model', `scripted:${script}`, '--cwd', w.ws, '--sandbox', 'off', '--max-depth', '3', 'go three deep'], { env: { BRIDLE_HOME: w.home } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('root: all three levels reported');
    const logs = w.logs();
    expect([...logs.values()].map((l) => (l[0] as { depth: number }).depth)).toEqual([0, 1, 2, 3]);
    for (const [id, log] of logs) expect(verifyLog(log).violations, id).toEqual([]);
    const [, , , third] = [...logs.entries()];
    const refused = third![1].find((e) => e.kind === 'tool/result' && e.name === 'delegate');
    expect(refused).toMatchObject({ status: 'error', code: 'DEPTH_LIMIT' });
    expect((refused as { content: string }).content).toContain('delegation depth 4 is over the limit of 3 (--max-depth)');
    expect(third![1].some((e) => e.kind === 'subagent/start')).toBe(false);

    // The depth is the log's: resumed on its own, the depth-3 session is still refused a child.
    const again = w.script('again.json', { label: 'scripted: the resumed depth-3 session tries again', responses: [delegate('level 4, again'), { text: 'refused again' }] });
    const resumed = await runCli(['resume', third![0], '--model', `scripted:${again}`, '--sandbox', 'off', '--max-depth', '3', 'try once more'], { env: { BRIDLE_HOME: w.home } });
    expect(resumed.code, resumed.stderr).toBe(0);
    const after = w.logs();
    expect(after.size).toBe(4);
    const results = after.get(third![0])!.filter((e) => e.kind === 'tool/result' && e.name === 'delegate');
    expect(results.map((e) => (e as { code?: string }).code)).toEqual(['DEPTH_LIMIT', 'DEPTH_LIMIT']);
  });
});
