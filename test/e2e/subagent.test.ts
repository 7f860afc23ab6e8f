/** `bridle run --max-depth 1`: a delegated task runs as a child session with a log of its own beside the parent's. */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseLog } from '../../log/parse.js';
import { verifyLog } from '../../log/verify.js';
import { runCli } from '../helpers/cli.js';

describe('bridle run with subagents', () => {
  it('delegates to a child session (depth 1, approval never) and logs both', async () => {
    const root = mkdtempSync(join(tmpdir(), 'bridle-sub-'));
    const home = join(root, 'home');
    const ws = join(root, 'ws');
    mkdirSync(ws);
    writeFileSync(join(ws, 'README.md'), '# hi\n');
    const script = join(root, 'script.json');
    writeFileSync(
      script,
      JSON.stringify({
        label: 'scripted: delegation (parent and child share this script, in request order)',
        responses: [
          { toolCalls: [{ name: 'delegate', arguments: { task: 'What files are in the workspace?' } }] },
          { toolCalls: [{ name: 'list_dir', arguments: {} }, { name: 'bash', arguments: { command: 'touch hacked' } }] },
          { text: 'There is one file, README.md.' },
          { text: 'The subagent found README.md.' },
        ],
      }),
    );
    const r = await runCli(['run', '--model', `scripted:${script}`, '--cwd', ws, '--approval', 'auto', '--sandbox', 'off', '--max-depth', '1', 'look around'], { env: { BRIDLE_HOME: home } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('The subagent found README.md.');
    const logs = readdirSync(join(home, 'sessions')).sort();
    expect(logs).toHaveLength(2);
    const [parentFile, childFile] = logs[0]!.length < logs[1]!.length ? logs : [logs[1]!, logs[0]!];
    const parent = parseLog(readFileSync(join(home, 'sessions', parentFile!), 'utf8')).entries;
    const child = parseLog(readFileSync(join(home, 'sessions', childFile!), 'utf8')).entries;
    expect(verifyLog(parent).violations).toEqual([]);
    expect(verifyLog(child).violations).toEqual([]);
    expect(child[0]).toMatchObject({ kind: 'session/start', depth: 1 });
    expect(parent.filter((e) => e.kind.startsWith('subagent/')).map((e) => e.kind)).toEqual(['subagent/start', 'subagent/end']);
    // The parent runs under auto, the child under never: its bash was denied, not run.
    expect(child.find((e) => e.kind === 'tool/result' && e.name === 'bash')).toMatchObject({ status: 'denied' });
    expect(readdirSync(ws)).toEqual(['README.md']);
  });
});
