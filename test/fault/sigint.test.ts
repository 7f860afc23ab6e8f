/**
 * Ctrl-C through the CLI: the first SIGINT cancels the turn (the running call
 * ABORTED, the next ABORTED_BEFORE_DISPATCH, the turn ended aborted by the
 * user, exit 130 once the log is flushed); a second exits at once and still
 * leaves a log that verifies.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runPrompt } from '../../cli/run.js';
import { composeProduct } from '../../cli/settings.js';
import { verifyFile } from '../../cli/verify-log.js';
import type { Entry, EntryOf } from '../../log/entries.js';
import { parseLog } from '../../log/parse.js';
import { verifyLog } from '../../log/verify.js';
import { cliBuilt, createWorld, logHas, waitFor, type World } from './cli-world.js';

const SLOW = {
  responses: [
    {
      text: 'two commands',
      toolCalls: [
        { name: 'bash', arguments: { command: 'echo c1 >> marker; sleep 5' } },
        { name: 'bash', arguments: { command: 'echo c2 >> marker' } },
      ],
    },
    { text: 'never reached' },
  ],
};
const results = (entries: Entry[]) => entries.filter((e): e is EntryOf<'tool/result'> => e.kind === 'tool/result').map((r) => [r.callId, r.code]);

let w: World | undefined;
afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
  w?.cleanup();
  w = undefined;
});

describe.skipIf(!cliBuilt)('SIGINT through the real CLI', () => {
  const start = (world: World) =>
    world.spawn(['run', 'go', '--model', `scripted:${world.script('slow.json', SLOW)}`, '--cwd', world.workspace, '--approval', 'auto', '--sandbox', 'off']);

  it('one Ctrl-C cancels the turn, flushes the log, exits 130', async () => {
    w = createWorld();
    const child = start(w);
    await waitFor(() => w!.marker().length > 0, 15_000, 'the first command to start');
    const t0 = Date.now();
    child.proc.kill('SIGINT');
    const { code } = await child.exit;
    expect(code, child.stderr()).toBe(130);
    expect(Date.now() - t0).toBeLessThan(3000);
    const entries = parseLog(w.log()).entries;
    expect(results(entries)).toEqual([
      ['t1.s1.c1', 'ABORTED'],
      ['t1.s1.c2', 'ABORTED_BEFORE_DISPATCH'],
    ]);
    expect(entries.find((e) => e.kind === 'turn/end')).toMatchObject({ reason: 'aborted', cause: 'user' });
    expect(verifyFile(w.logPath()!).verdict.violations).toEqual([]);
    expect(w.marker()).toEqual(['c1']);
  });

  it('a second Ctrl-C exits at once, with a valid log', async () => {
    w = createWorld();
    const child = start(w);
    await waitFor(() => logHas(w!.log(), 'tool/dispatch', 't1.s1.c1'), 15_000, 'the first dispatch');
    child.proc.kill('SIGINT');
    await waitFor(() => child.stderr().includes('cancelling') || child.proc.exitCode !== null, 5000, 'the first interrupt');
    child.proc.kill('SIGINT');
    const { code } = await child.exit;
    expect(code).toBe(130);
    expect(verifyFile(w.logPath()!).verdict.violations).toEqual([]);
  });
});

describe('a second Ctrl-C while the turn is being torn down (in process)', () => {
  it('closes the open turn synchronously, then exits 130; the log left at exit verifies', async () => {
    w = createWorld();
    vi.stubEnv('BRIDLE_HOME', w.home);
    vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    let atExit: { code: unknown; text: string } | undefined;
    vi.spyOn(process, 'exit').mockImplementation(((code: unknown) => {
      atExit ??= { code, text: fs.readFileSync(w!.logPath()!, 'utf8') };
    }) as never);
    const flags = { model: `scripted:${w.script('slow.json', SLOW)}`, cwd: w.workspace, approval: 'auto', sandbox: 'off' };
    const done = runPrompt('go', await composeProduct(flags), flags);
    await waitFor(() => logHas(w!.log(), 'tool/dispatch', 't1.s1.c1'), 15_000, 'the first dispatch');
    // Two interrupts back to back: the second lands before the cancelled turn has ended.
    process.emit('SIGINT');
    process.emit('SIGINT');
    expect(atExit?.code).toBe(130);
    const entries = parseLog(atExit!.text).entries;
    expect(verifyLog(entries).violations).toEqual([]);
    expect(entries.at(-1)).toMatchObject({ kind: 'turn/end', reason: 'aborted', cause: 'user' });
    expect(entries.some((e) => e.kind === 'repair' && e.found === 'open-turn')).toBe(true);
    await done;
    expect(path.basename(w.logPath()!)).toMatch(/\.jsonl$/);
  });
});
