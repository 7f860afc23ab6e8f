/**
 * `npm run paths`: per machine, how many states and transitions the
 * definition has, how many the generated paths covered, how many paths ran.
 * `--json` prints only the rows, as a JSON array, on stdout (use
 * `npm run -s paths -- --json` so npm's own banner stays off stdout).
 * Exit code 1 when anything is uncovered or a path failed; the details go to
 * stderr.
 */
import { discoverMachines, rowOf, runMachine } from './suite.js';

const reports = (await discoverMachines()).map((m) => runMachine(m));
const rows = reports.map(rowOf);

if (process.argv.includes('--json')) {
  process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
} else {
  const head = ['machine', 'states', 'states covered', 'transitions', 'transitions covered', 'paths'];
  const body = rows.map((r) => [r.machine, r.states, r.statesCovered, r.transitions, r.transitionsCovered, r.paths].map(String));
  const width = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => (i === 0 ? c.padEnd(width[i]!) : c.padStart(width[i]!))).join(' | ')} |`;
  process.stdout.write([line(head), `|${width.map((w, i) => (i === 0 ? `:${'-'.repeat(w + 1)}` : `${'-'.repeat(w + 1)}:`)).join('|')}|`, ...body.map(line)].join('\n') + '\n');
}

let bad = false;
for (const r of reports) {
  for (const s of r.uncoveredStates) (bad = true), process.stderr.write(`${r.machine}: state ${s} is reached by no path\n`);
  for (const t of r.uncoveredTransitions) (bad = true), process.stderr.write(`${r.machine}: transition ${t} is taken by no path\n`);
  for (const f of r.failed) (bad = true), process.stderr.write(`${r.machine}: path ${f.name}\n  ${f.problems.join('\n  ')}\n`);
}
if (bad) process.exitCode = 1;
