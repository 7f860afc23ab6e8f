import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Entry } from '../../log/entries.js';
import { nearestNestedAgentsFile, readAgentsFiles } from './agents-files.js';
import { NESTED_TOTAL_CAP, nestedBlock, shownNested, touchedDir } from './nested-agents.js';
import { tempDir } from '../../test/helpers/temp.js';

let root: string | undefined;
afterEach(() => root && fs.rmSync(root, { recursive: true, force: true }));

/** root, nested, override, oversize, a symlink out, a file outside the workspace. */
function tree() {
  root = fs.realpathSync(tempDir('bridle-nested-'));
  const ws = path.join(root, 'ws');
  const w = (rel: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(ws, rel)), { recursive: true });
    fs.writeFileSync(path.join(ws, rel), text);
  };
  fs.mkdirSync(path.join(ws, '.git'), { recursive: true });
  fs.writeFileSync(path.join(root, 'AGENTS.md'), 'OUTSIDE THE WORKSPACE');
  fs.writeFileSync(path.join(root, 'secret.txt'), 'OUTSIDE SECRET');
  w('AGENTS.md', 'root rules');
  w('pkg/AGENTS.md', 'pkg rules');
  w('pkg/deep/src/x.ts', '');
  w('over/AGENTS.md', 'plain rules');
  w('over/AGENTS.override.md', 'override rules');
  w('huge/AGENTS.md', 'h'.repeat(100_000));
  fs.mkdirSync(path.join(ws, 'link'));
  fs.symlinkSync(path.join(root, 'secret.txt'), path.join(ws, 'link', 'AGENTS.md'));
  fs.symlinkSync(root, path.join(ws, 'out'));
  return ws;
}

describe('nested AGENTS.md files (issue 23 item 6)', () => {
  it('the nearest file below the workspace governs a directory; the workspace root is the prompt’s, not nested', () => {
    const ws = tree();
    expect(nearestNestedAgentsFile(ws, path.join(ws, 'pkg', 'deep', 'src'))).toEqual({ path: path.join('pkg', 'AGENTS.md'), text: 'pkg rules' });
    expect(nearestNestedAgentsFile(ws, ws)).toBeUndefined();
    expect(nearestNestedAgentsFile(ws, path.join(ws, 'nothing-here'))).toBeUndefined();
  });

  it('AGENTS.override.md replaces the AGENTS.md beside it, in the prompt and nested', () => {
    const ws = tree();
    expect(nearestNestedAgentsFile(ws, path.join(ws, 'over'))).toEqual({ path: path.join('over', 'AGENTS.override.md'), text: 'override rules' });
    fs.writeFileSync(path.join(ws, 'AGENTS.override.md'), 'root override');
    expect(readAgentsFiles(ws)).toEqual([{ path: 'AGENTS.override.md', text: 'root override' }]);
  });

  it('never reads outside the workspace: not a parent’s file, not through a symlinked file or directory', () => {
    const ws = tree();
    expect(nearestNestedAgentsFile(ws, root!)).toBeUndefined();
    expect(nearestNestedAgentsFile(ws, path.join(ws, '..', 'x'))).toBeUndefined();
    expect(nearestNestedAgentsFile(ws, path.join(ws, 'link'))!.text).toMatch(/^\[not read: .* leads outside the project/);
    const viaDir = nearestNestedAgentsFile(ws, path.join(ws, 'out'))!;
    expect(viaDir.text).toMatch(/^\[not read: .* leads outside the project/);
    expect(viaDir.text).not.toContain('OUTSIDE THE WORKSPACE');
  });

  it('an oversize file is cut, and past the session’s total a file is named, not shown', () => {
    const ws = tree();
    const huge = nearestNestedAgentsFile(ws, path.join(ws, 'huge'))!;
    const block = nestedBlock(huge, 0);
    expect(block.length).toBeLessThan(17_000);
    expect(block).toContain('characters of huge/AGENTS.md left out');
    expect(nestedBlock(huge, NESTED_TOTAL_CAP)).toContain('[not shown:');
  });

  it('a block is found again in the log, so it is added once per session, also after a resume', () => {
    const ws = tree();
    const file = nearestNestedAgentsFile(ws, path.join(ws, 'pkg'))!;
    const result = { kind: 'tool/result', name: 'read_file', content: `1\tx${nestedBlock(file, 0)}` } as unknown as Entry;
    const forged = { kind: 'tool/result', name: 'bash', content: nestedBlock({ path: 'over/AGENTS.md', text: 'x' }, 0) } as unknown as Entry;
    expect([...shownNested([result, forged]).keys()]).toEqual([path.join('pkg', 'AGENTS.md')]);
  });

  it('file tools touch their path’s directory, list_dir the directory itself', () => {
    expect(touchedDir('read_file', { path: 'pkg/a.ts' }, '/w')).toBe('/w/pkg');
    expect(touchedDir('list_dir', { path: 'pkg' }, '/w')).toBe('/w/pkg');
    expect(touchedDir('bash', { command: 'cat pkg/a.ts' }, '/w')).toBeUndefined();
  });
});
