/** Where the checked-in diagrams and the viewer live, whether code runs from `dist/` or from source. */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The source `visualizations/` folder. */
export function visualizationsDir(): string {
  const here = fileURLToPath(new URL('.', import.meta.url));
  return here.includes('/dist/') ? join(here, '..', '..', 'visualizations') : here;
}

/** The viewer's static files (plain HTML, JS, CSS; no build step). */
export const viewerDir = (): string => join(visualizationsDir(), 'viewer');
