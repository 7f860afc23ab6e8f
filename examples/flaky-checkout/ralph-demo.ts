/**
 * `npm run demo:ralph`: the Ralph loop on the flaky-checkout example, which
 * gains three more flaky tests with unrelated causes (`ralph/overlay/`). A
 * scripted model (canned responses, labelled as such wherever they show)
 * fixes one per round with bridle's real tools; one round claims `complete`
 * too early, and the verifier — the suite run 20 times, under the sandbox —
 * rejects the claim; the next round is told what failed, fixes it, and the
 * run ends verified. On a throwaway copy: the repo never changes.
 */
import { cpSync, mkdtempSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findBwrap } from '../../adapters/sandbox/bwrap.js';
import { ralphCommand } from '../../cli/ralph.js';

/** The example folder in the source tree, whether this runs from `dist/` or from source. */
function exampleDir(): string {
  const here = fileURLToPath(new URL('.', import.meta.url));
  return here.includes(`${'/dist/'}`) ? join(here, '..', '..', '..', 'examples', 'flaky-checkout') : here;
}

export const OBJECTIVE = 'Make the test suite pass reliably: every test in test/ must pass on every run of npm test. Fix the causes, not the symptoms (no retries, no skipped tests).';
/** The verifier: the whole suite (what `npm test` runs), 20 times; the first failing run's verdict lines are its output. */
export const VERIFY = 'for i in $(seq 20); do out=$(node --test 2>&1) || { echo "run $i of 20 failed:"; echo "$out" | grep -E "not ok|^# (pass|fail)"; exit 1; }; done; echo "20 of 20 runs passed"';

export async function runRalphDemo(): Promise<number> {
  const src = exampleDir();
  const copy = realpathSync(mkdtempSync(join(tmpdir(), 'bridle-ralph-demo-')));
  cpSync(join(src, 'project'), copy, { recursive: true });
  cpSync(join(src, 'ralph', 'overlay'), copy, { recursive: true });
  process.stderr.write(
    `bridle ralph demo: a scripted model (canned responses from examples/flaky-checkout/ralph/script.json, not a live model)\n` +
      `works through four flaky tests, one per round, on a throwaway copy of the example: ${copy}\n` +
      `a claim of complete is checked by running the suite 20 times: ${VERIFY}\n`,
  );
  const confined = !('missing' in findBwrap());
  process.stderr.write(
    confined
      ? 'shell commands, the check included, run in the bubblewrap sandbox: they can write only in that copy and a private /tmp, with no network.\n\n'
      : 'bubblewrap is not installed, so shell commands, the check included, run UNCONFINED (with your permissions) on that throwaway copy.\n\n',
  );
  const code = await ralphCommand(OBJECTIVE, { model: `scripted:${join(src, 'ralph', 'script.json')}`, cwd: copy, approval: 'auto', sandbox: confined ? 'bwrap' : 'off', rounds: '6', verify: VERIFY });
  process.stderr.write(`\nthe fixed copy stays at ${copy}; the example in the repo is unchanged.\n`);
  return code;
}

if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = await runRalphDemo();
}
