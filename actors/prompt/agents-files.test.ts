import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { projectRoot, readAgentsFiles } from './agents-files.js';

let root: string | undefined;
afterEach(() => root && fs.rmSync(root, { recursive: true, force: true }));

describe('AGENTS.md files', () => {
  it('are read from the project root down to the working directory, outermost first', () => {
    root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'bridle-agents-')));
    const repo = path.join(root, 'repo');
    const deep = path.join(repo, 'pkg', 'src');
    fs.mkdirSync(deep, { recursive: true });
    fs.mkdirSync(path.join(repo, '.git'));
    fs.writeFileSync(path.join(root, 'AGENTS.md'), 'outside the project: never read');
    fs.writeFileSync(path.join(repo, 'AGENTS.md'), 'root rules');
    fs.writeFileSync(path.join(repo, 'pkg', 'AGENTS.md'), 'package rules');
    expect(projectRoot(deep)).toBe(repo);
    expect(readAgentsFiles(deep)).toEqual([
      { path: 'AGENTS.md', text: 'root rules' },
      { path: path.join('pkg', 'AGENTS.md'), text: 'package rules' },
    ]);
    expect(readAgentsFiles(repo)).toEqual([{ path: 'AGENTS.md', text: 'root rules' }]);
  });

  it('without a project root, only the working directory is looked at; none is fine', () => {
    root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'bridle-agents-')));
    expect(readAgentsFiles(root, root)).toEqual([]);
    fs.mkdirSync(path.join(root, 'AGENTS.md'));
    expect(readAgentsFiles(root, root)).toEqual([]);
  });
});
