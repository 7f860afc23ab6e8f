/**
 * The file tools and bash reach the world only through the fs and subprocess
 * seams (ctx.fs, ctx.subprocess): no file under tools/, tests included, may
 * import the file system or child processes itself. (grep's matcher may use
 * worker_threads: its worker gets file contents from grep, which reads them
 * through ctx.fs.)
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { importsOf } from './layering.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const WORLD_MODULES = /^(node:)?(fs|fs\/promises|child_process)$/;

/** Every .ts file below `dir`, relative to the repository root. */
function filesUnder(dir: string): string[] {
  return readdirSync(path.join(root, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => path.join(dir, f))
    .sort();
}

describe('architecture: the tools go through the execution seams', () => {
  it('no file under tools/ imports node:fs, node:fs/promises or node:child_process', () => {
    const files = filesUnder('tools');
    expect(files).toContain(path.join('tools', 'read-file.ts'));
    const offending = files.flatMap((f) => importsOf(root, f).filter((spec) => WORLD_MODULES.test(spec)).map((spec) => `${f} imports ${spec}`));
    expect(offending).toEqual([]);
  });

  it('the check catches every spelling of such an import', () => {
    const caught = ['node:fs', 'fs', 'node:fs/promises', 'fs/promises', 'node:child_process', 'child_process'];
    expect(caught.filter((s) => WORLD_MODULES.test(s))).toEqual(caught);
    expect(['node:path', 'node:worker_threads', 'node:buffer', './fs.js', 'fsevents'].filter((s) => WORLD_MODULES.test(s))).toEqual([]);
    // The scanner sees type-only imports too (a provider beside the tools has both kinds).
    expect(importsOf(root, path.join('adapters', 'fs', 'local-walk.ts'))).toContain('node:fs');
    expect(importsOf(root, path.join('adapters', 'fs', 'local.ts'))).toContain('node:fs/promises');
  });
});
