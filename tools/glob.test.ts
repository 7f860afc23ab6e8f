import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GLOB_MAX_RESULTS, globTool } from './glob.js';
import { createTempWorkspace, type TempWorkspace } from '../adapters/fs/testing.js';

let t: TempWorkspace;
beforeEach(() => {
  t = createTempWorkspace({ bridleHomeInside: true });
  t.write({
    'a.ts': '',
    'src/b.ts': '',
    'src/deep/c.ts': '',
    'src/deep/d.js': '',
    'node_modules/pkg/index.ts': '',
    '.git/HEAD': '',
    '.bridle/sessions/s.ts': '',
  });
});
afterEach(() => t.cleanup());

const glob = (pattern: string) => globTool.execute(globTool.parameters.parse({ pattern }), t.ctx);

describe('glob', () => {
  it('skips bridle home when it is spelled through a symlink (it was listed: only the spelled path was excluded)', async () => {
    const spelled = path.join(t.root, 'home-alias');
    t.symlink(t.bridleHome, spelled);
    const out = await globTool.execute({ pattern: '**/*.ts' }, t.ctxWith({ bridleHome: spelled }));
    expect(out).toEqual({ status: 'ok', content: 'a.ts\nsrc/b.ts\nsrc/deep/c.ts' });
  });

  it('returns sorted workspace-relative matches, skipping node_modules, .git and bridle home', async () => {
    expect(await glob('**/*.ts')).toEqual({ status: 'ok', content: 'a.ts\nsrc/b.ts\nsrc/deep/c.ts' });
    expect((await glob('src/**/*.{js,ts}')).content).toBe('src/b.ts\nsrc/deep/c.ts\nsrc/deep/d.js');
    expect((await glob('./*.ts')).content).toBe('a.ts');
  });

  it('looks into node_modules or .git when the pattern names them', async () => {
    expect((await glob('node_modules/**/*.ts')).content).toBe('node_modules/pkg/index.ts');
    expect((await glob('.git/*')).content).toBe('.git/HEAD');
    expect((await glob('{src,node_modules}/**/index.ts')).content).toBe('node_modules/pkg/index.ts');
    t.write({ '.github/ci.yml': '' });
    expect((await glob('**/.git*/**')).content).toBe('.github/ci.yml');
  });

  it('lists symlinks by name without following them out of the workspace', async () => {
    t.write({ [path.join(t.outside, 'secret.ts')]: '' });
    t.symlink(t.outside, path.join(t.workspace, 'link'));
    expect((await glob('**/*.ts')).content).not.toContain('secret');
    expect((await glob('link')).content).toBe('link');
  });

  it('says when nothing matches and caps many matches', async () => {
    expect((await glob('*.py')).content).toBe('No files match "*.py".');
    t.write(Object.fromEntries(Array.from({ length: GLOB_MAX_RESULTS + 3 }, (_, i) => [`many/f${i}.txt`, ''])));
    const lines = (await glob('many/*.txt')).content.split('\n');
    expect(lines).toHaveLength(GLOB_MAX_RESULTS + 1);
    expect(lines.at(-1)).toContain(`3 more matches not shown, of ${GLOB_MAX_RESULTS + 3}`);
  });

  it('refuses patterns that leave the workspace', async () => {
    expect(await glob('../*')).toMatchObject({ status: 'error', code: 'INVALID_PATTERN' });
    expect(await glob('/etc/*')).toMatchObject({ status: 'error', code: 'INVALID_PATTERN' });
  });

  it('is read-only and presents in one line', () => {
    expect(globTool.readOnly).toBe(true);
    expect(globTool.present({ pattern: '**/*.ts' })).toBe('glob **/*.ts');
  });
});
