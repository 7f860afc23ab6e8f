/** CLI cold start: `node dist/cli/main.js --version`, as a user's shell runs it. */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export function coldStartMs(): number {
  const main = fileURLToPath(new URL('../cli/main.js', import.meta.url));
  const t = process.hrtime.bigint();
  const r = spawnSync(process.execPath, [main, '--version'], { encoding: 'utf8' });
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  if (r.status !== 0) throw new Error(`bridle --version failed: ${r.stderr}`);
  return ms;
}
