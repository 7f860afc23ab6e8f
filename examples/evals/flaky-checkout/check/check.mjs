// The flaky-checkout check: the project's own tests, with every catalog load
// made 250 ms slower than it is (slow-load.mjs), so an unawaited load always
// loses the race. Passes when all of them pass and none were removed.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const EXPECTED_TESTS = 4;
const preload = fileURLToPath(new URL('./slow-load.mjs', import.meta.url));
const r = spawnSync(process.execPath, ['--import', preload, '--test', '--test-reporter=tap'], { encoding: 'utf8' });
const count = (name) => Number(new RegExp(`^# ${name} (\\d+)$`, 'm').exec(r.stdout)?.[1] ?? NaN);
const [tests, pass, fail] = [count('tests'), count('pass'), count('fail')];
console.log(`tests ${tests}, pass ${pass}, fail ${fail} (every catalog load 250 ms slower)`);
if (r.status !== 0 || fail !== 0 || pass < EXPECTED_TESTS) {
  console.log(r.stdout.split('\n').filter((l) => /^\s*not ok|error:/.test(l)).slice(0, 12).join('\n'));
  process.exit(1);
}
