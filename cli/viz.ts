/** `bridle viz`: regenerates every machine's diagram in `visualizations/` (what `npm run viz` does). */
import { visualizationsDir } from '../visualizations/paths.js';
import { SetupError } from './errors.js';

export interface VizFlags {
  check?: boolean;
}

export async function vizCommand(flags: VizFlags, out: NodeJS.WritableStream = process.stdout): Promise<number> {
  let gen: typeof import('../visualizations/generate.js');
  let render: typeof import('../visualizations/render.js');
  try {
    [gen, render] = await Promise.all([import('../visualizations/generate.js'), import('../visualizations/render.js')]);
    if (flags.check) {
      const { readFileSync } = await import('node:fs');
      const { join } = await import('node:path');
      const dir = visualizationsDir();
      const stale = (await render.renderAll()).filter((f) => {
        try {
          return readFileSync(join(dir, f.path), 'utf8') !== f.content;
        } catch {
          return true;
        }
      });
      out.write(stale.length ? `stale diagrams: ${stale.map((f) => f.path).join(', ')} (run bridle viz)\n` : 'diagrams are fresh\n');
      return stale.length ? 1 : 0;
    }
    const { written, unchanged } = await gen.generateDiagrams();
    out.write(`visualizations: ${written.length} written${written.length ? ` (${written.join(', ')})` : ''}, ${unchanged.length} unchanged\n`);
    return 0;
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_MODULE_NOT_FOUND' && String(err).includes('@viz-js/viz')) {
      throw new SetupError('bridle viz renders SVG with @viz-js/viz, a development dependency: run it in a checkout after `npm install`');
    }
    throw err;
  }
}
