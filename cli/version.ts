/** bridle's version, from its package.json (two levels up from `dist/cli/`, one from `cli/` in a checkout). */
import { readFileSync } from 'node:fs';

let cached: string | undefined;

export function bridleVersion(): string {
  if (cached) return cached;
  for (const up of ['../../package.json', '../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(up, import.meta.url), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'bridle' && pkg.version) return (cached = pkg.version);
    } catch {
      // Not this level: try the next.
    }
  }
  return (cached = '0.0.0');
}
