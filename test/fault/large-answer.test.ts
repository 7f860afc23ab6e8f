/**
 * Every log bridle writes, bridle can read (issue #20 item 4), through the
 * real CLI at the default limit: a model that streams more than one entry may
 * hold is cut `OUTPUT_TOO_LARGE`; the run says so, and `replay` and
 * `run --session` take the log back. (A 300 MB answer once became one line no
 * reader would take.)
 */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { MAX_ANSWER_BYTES } from '../../log/entry-size.js';
import { parseLog } from '../../log/parse.js';
import { cliBuilt, createWorld } from './cli-world.js';

const common = (ws: string) => ['--cwd', ws, '--approval', 'auto', '--sandbox', 'off'];

describe.skipIf(!cliBuilt)('an answer past the default limit, through the CLI', () => {
  it('a model streaming 9 MiB of text is cut OUTPUT_TOO_LARGE at 4 MiB; replay exits 0 and the session goes on', async () => {
    const w = createWorld();
    try {
      const script = w.script('big.json', { responses: [{ text: 'w'.repeat(9 * 1024 * 1024) }] });
      const run = w.spawn(['run', 'talk a lot', '--model', `scripted:${script}`, ...common(w.workspace)]);
      const r = await run.exit;
      expect(r.code, run.stderr()).toBe(1);
      expect(run.stderr()).toMatch(/OUTPUT_TOO_LARGE/);
      const log = w.logPath()!;
      const entries = parseLog(w.log()).entries;
      const answer = entries.find((e) => e.kind === 'assistant/message');
      expect(answer).toMatchObject({ finish: { kind: 'error', code: 'OUTPUT_TOO_LARGE' } });
      for (const line of w.log().split('\n')) expect(Buffer.byteLength(line)).toBeLessThan(MAX_ANSWER_BYTES + 4096);
      expect(entries.find((e) => e.kind === 'turn/end')).toMatchObject({ reason: 'error', code: 'OUTPUT_TOO_LARGE' });

      const replay = w.spawn(['replay', log]);
      expect((await replay.exit).code, replay.stderr()).toBe(0);
      const more = w.spawn(['run', '--session', log, 'briefly', '--model', `scripted:${w.script('short.json', { responses: [{ text: 'short this time' }] })}`, ...common(w.workspace)]);
      expect((await more.exit).code, more.stderr()).toBe(0);
      expect(fs.readFileSync(log, 'utf8')).toContain('short this time');
    } finally {
      w.cleanup();
    }
  }, 60_000);
});
