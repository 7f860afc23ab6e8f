/**
 * `npm run viz` / `bridle viz`: writes every machine's diagram into
 * `visualizations/` (the source folder, also when run from `dist/`).
 */
import { readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { visualizationsDir } from './paths.js';
import { renderAll } from './render.js';

/** Contract: writes only files whose content changed; resolves with the paths written. */
export async function generateDiagrams(dir = visualizationsDir()): Promise<{ written: string[]; unchanged: string[] }> {
  const written: string[] = [];
  const unchanged: string[] = [];
  for (const f of await renderAll()) {
    const path = join(dir, f.path);
    let old: string | undefined;
    try {
      old = readFileSync(path, 'utf8');
    } catch {
      old = undefined;
    }
    if (old === f.content) unchanged.push(f.path);
    else {
      writeFileSync(path, f.content);
      written.push(f.path);
    }
  }
  return { written, unchanged };
}

if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { written, unchanged } = await generateDiagrams();
  process.stdout.write(`visualizations: ${written.length} written${written.length ? ` (${written.join(', ')})` : ''}, ${unchanged.length} unchanged\n`);
}
