// Prints test/helpers/file-durations.ts's table from the JSON report of the last full `vitest run`
// (.vitest-report.json): every file that took 4 s or more, longest first. Paste it over the old table.
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';

const report = JSON.parse(readFileSync('.vitest-report.json', 'utf8'));
const rows = report.testResults
  .map((r) => [relative(process.cwd(), r.name).split('\\').join('/'), (r.endTime - r.startTime) / 1000])
  .filter(([, s]) => s >= 4)
  .sort((a, b) => b[1] - a[1]);
for (const [path, s] of rows) console.log(`  ['${path}', ${Math.round(s)}],`);
