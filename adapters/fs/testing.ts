/**
 * Throwaway workspaces for tests (and embedders' tests): a real temp directory
 * with a workspace, a `$BRIDLE_HOME` and an "outside" directory side by side,
 * and a tool context whose `fs` is the local file system over it, so
 * confinement can be tested against real symlinks. The helpers below do on
 * the disk what a test sets up or checks, so a tool's own tests need no
 * `node:fs` of their own.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Subprocess } from '../../ports/subprocess.js';
import type { ToolContext } from '../../ports/tools.js';
import { createMemorySubprocess } from '../subprocess/memory.js';
import { createLocalFs, type LocalFsOptions } from './local.js';

export interface TempWorkspace {
  /** Real path of the directory holding the three below. */
  root: string;
  workspace: string;
  bridleHome: string;
  /** A directory outside the workspace, for escape attempts to aim at. */
  outside: string;
  ctx: ToolContext;
  /** `ctx` with a local file system configured otherwise (another home spelling, protected paths). */
  ctxWith(over: Partial<LocalFsOptions>): ToolContext;
  /** Writes files relative to the workspace (or at absolute paths), creating parents. */
  write(files: Record<string, string | Uint8Array>): void;
  /** A path relative to the workspace made absolute; an absolute one as it is. */
  at(p: string): string;
  read(p: string): string;
  readBytes(p: string): Buffer;
  exists(p: string): boolean;
  /** Names in a directory, sorted. */
  names(dir: string): string[];
  isSymlink(p: string): boolean;
  mkdir(p: string): void;
  /** A symbolic link at `link` holding `target` as written. */
  symlink(target: string, link: string): void;
  /** A second hard link `link` to `existing`. */
  hardLink(existing: string, link: string): void;
  /** A file of `size` bytes that begins with `head` and is a hole after it (no disk used). */
  sparse(p: string, head: string, size: number): void;
  cleanup(): void;
}

export interface TempWorkspaceOptions {
  /** How commands run (a provider, or one built for the workspace); default: none, every command refused. */
  subprocess?: Subprocess | ((workspace: string) => Subprocess);
  signal?: AbortSignal;
  bridleHomeInside?: boolean;
}

export function createTempWorkspace(options: TempWorkspaceOptions = {}): TempWorkspace {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'bridle-tools-')));
  const workspace = path.join(root, 'ws');
  const outside = path.join(root, 'outside');
  const bridleHome = options.bridleHomeInside ? path.join(workspace, '.bridle') : path.join(root, 'home');
  for (const dir of [workspace, outside, bridleHome]) fs.mkdirSync(dir, { recursive: true });
  // A test that means to run commands passes a subprocess; any other refuses them.
  const subprocess = typeof options.subprocess === 'function' ? options.subprocess(workspace) : (options.subprocess ?? createMemorySubprocess());
  const ctxWith = (over: Partial<LocalFsOptions>): ToolContext => ({
    fs: createLocalFs({ workspace, bridleHome, ...over }),
    subprocess,
    signal: options.signal ?? new AbortController().signal,
  });
  const at = (p: string) => path.resolve(workspace, p);
  return {
    root,
    workspace,
    bridleHome,
    outside,
    ctx: ctxWith({}),
    ctxWith,
    write(files) {
      for (const [rel, content] of Object.entries(files)) {
        const file = at(rel);
        fs.mkdirSync(path.dirname(file), { recursive: true });
        fs.writeFileSync(file, content);
      }
    },
    at,
    read: (p) => fs.readFileSync(at(p), 'utf8'),
    readBytes: (p) => fs.readFileSync(at(p)),
    exists: (p) => fs.existsSync(at(p)),
    names: (dir) => fs.readdirSync(at(dir)).sort(),
    isSymlink: (p) => fs.lstatSync(at(p)).isSymbolicLink(),
    mkdir: (p) => fs.mkdirSync(at(p), { recursive: true }),
    symlink: (target, link) => fs.symlinkSync(target, at(link)),
    hardLink: (existing, link) => fs.linkSync(at(existing), at(link)),
    sparse(p, head, size) {
      const fd = fs.openSync(at(p), 'w');
      try {
        fs.writeSync(fd, head);
        fs.ftruncateSync(fd, size);
      } finally {
        fs.closeSync(fd);
      }
    },
    cleanup: () => fs.rmSync(root, { recursive: true, force: true }),
  };
}
