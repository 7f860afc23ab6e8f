/**
 * `npm start`: the embedded default. A scripted model (canned responses,
 * labelled as such wherever they show) investigates a flaky test with
 * bridle's real tools, on a throwaway copy of `project/`. The repo never changes.
 */
import { cpSync, mkdtempSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findBwrap } from '../../adapters/sandbox/bwrap.js';
import { runPrompt } from '../../cli/run.js';
import { composeProduct } from '../../cli/settings.js';

/** The example folder in the source tree, whether this runs from `dist/` or from source. */
function exampleDir(): string {
  const here = fileURLToPath(new URL('.', import.meta.url));
  return here.includes(`${'/dist/'}`) ? join(here, '..', '..', '..', 'examples', 'flaky-checkout') : here;
}

export async function runDemo(): Promise<number> {
  const src = exampleDir();
  const copy = realpathSync(mkdtempSync(join(tmpdir(), 'bridle-demo-')));
  cpSync(join(src, 'project'), copy, { recursive: true });
  process.stderr.write(
    `bridle demo: a scripted model (canned responses from examples/flaky-checkout/script.json, not a live model)\n` +
      `investigates a flaky test on a throwaway copy of the example project: ${copy}\n`,
  );
  // The demo should run anywhere; without bubblewrap it says so instead of failing every command.
  const confined = !('missing' in findBwrap());
  process.stderr.write(
    confined
      ? 'shell commands run in the bubblewrap sandbox: they can write only in that copy and a private /tmp, with no network.\n\n'
      : 'bubblewrap is not installed, so shell commands run UNCONFINED (with your permissions) on that throwaway copy.\n\n',
  );
  const flags = { model: `scripted:${join(src, 'script.json')}`, cwd: copy, approval: 'auto', sandbox: confined ? 'bwrap' : 'off' };
  const code = await runPrompt('find out why this test is flaky and fix it', await composeProduct(flags), flags);
  process.stderr.write(`\nthe fixed copy stays at ${copy}; the example in the repo is unchanged.\n`);
  return code;
}

if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = await runDemo();
}
