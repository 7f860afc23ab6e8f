import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AGENTS_MAX_BYTES, projectRoot, readAgentsFiles } from './agents-files.js';
import { tempDir } from '../../test/helpers/temp.js';

let root: string | undefined;
afterEach(() => root && fs.rmSync(root, { recursive: true, force: true }));

describe('AGENTS.md files', () => {
  it('are read from the project root down to the working directory, outermost first', () => {
    root = fs.realpathSync(tempDir('bridle-agents-'));
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
    root = fs.realpathSync(tempDir('bridle-agents-'));
    expect(readAgentsFiles(root, root)).toEqual([]);
    fs.mkdirSync(path.join(root, 'AGENTS.md'));
    expect(readAgentsFiles(root, root)).toEqual([]);
  });
});

describe('AGENTS.md files are read with the file tools’ confinement (a symlink to /proc/self/environ once put the API key in the prompt)', () => {
  const world = () => {
    root = fs.realpathSync(tempDir('bridle-agents-'));
    const repo = path.join(root, 'repo');
    const ws = path.join(repo, 'ws');
    fs.mkdirSync(path.join(repo, '.git'), { recursive: true });
    fs.mkdirSync(ws);
    fs.mkdirSync(path.join(root, 'outside'));
    fs.writeFileSync(path.join(root, 'outside', 'secret.txt'), 'OUTSIDE SECRET');
    return { repo, ws, outside: path.join(root, 'outside') };
  };
  const texts = (files: { text: string }[]) => files.map((f) => f.text).join('\n');

  it('a symlink to /proc/self/environ, here or in the project root, is not read', () => {
    const { repo, ws } = world();
    fs.symlinkSync('/proc/self/environ', path.join(repo, 'AGENTS.md'));
    fs.symlinkSync('/proc/self', path.join(ws, 'proc'));
    fs.symlinkSync('proc/environ', path.join(ws, 'AGENTS.md'));
    const files = readAgentsFiles(ws);
    expect(files.map((f) => f.path)).toEqual(['AGENTS.md', path.join('ws', 'AGENTS.md')]);
    expect(texts(files)).not.toContain(`PATH=${process.env.PATH}`);
    for (const f of files) expect(f.text).toMatch(/^\[not read: .* leads outside the project/);
  });

  it('a symlink leading out of the project, a hard link and a FIFO are not read; a symlink inside is', () => {
    const { repo, ws, outside } = world();
    fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(repo, 'AGENTS.md'));
    fs.linkSync(path.join(outside, 'secret.txt'), path.join(ws, 'AGENTS.md'));
    expect(texts(readAgentsFiles(ws))).not.toContain('OUTSIDE SECRET');
    expect(readAgentsFiles(ws)[1]!.text).toMatch(/^\[not read: .* has 2 hard links/);

    fs.rmSync(path.join(ws, 'AGENTS.md'));
    execFileSync('mkfifo', [path.join(ws, 'AGENTS.md')]);
    expect(readAgentsFiles(ws)[1]!.text).toMatch(/^\[not read: .* is not a regular file/);

    fs.rmSync(path.join(ws, 'AGENTS.md'));
    fs.writeFileSync(path.join(repo, 'shared.md'), 'shared rules');
    fs.symlinkSync('../shared.md', path.join(ws, 'AGENTS.md'));
    expect(readAgentsFiles(ws)[1]).toEqual({ path: path.join('ws', 'AGENTS.md'), text: 'shared rules' });
  });

  it("one leading into bridle's home is not read", () => {
    const { repo, ws } = world();
    const home = path.join(repo, '.bridle');
    fs.mkdirSync(path.join(home, 'sessions'), { recursive: true });
    fs.writeFileSync(path.join(home, 'sessions', 'other.jsonl'), 'ANOTHER SESSION');
    fs.symlinkSync('../.bridle/sessions/other.jsonl', path.join(ws, 'AGENTS.md'));
    expect(texts(readAgentsFiles(ws, projectRoot(ws), home))).not.toContain('ANOTHER SESSION');
  });

  it('only the first 256 KiB of a huge one are read', () => {
    const { ws } = world();
    fs.writeFileSync(path.join(ws, 'AGENTS.md'), 'é'.repeat(1024 * 1024));
    const [file] = readAgentsFiles(ws, ws);
    expect(Buffer.byteLength(file!.text)).toBeLessThan(AGENTS_MAX_BYTES + 200);
    expect(file!.text.startsWith('é'.repeat(1000))).toBe(true);
    expect(file!.text).not.toContain('\ufffd');
    expect(file!.text).toMatch(/\[… AGENTS\.md is 2\.0 MiB; only its first 256 KiB were read …\]$/);
  });
});
