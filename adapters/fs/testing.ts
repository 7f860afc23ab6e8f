/**
 * Throwaway workspaces for tests (and embedders' tests): a real temp directory
 * with a workspace, a `$BRIDLE_HOME` and an "outside" directory side by side,
 * so confinement can be tested against real symlinks.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Shell, ToolContext } from '../ports/tools.js';

export interface TempWorkspace {
  /** Real path of the directory holding the three below. */
  root: string;
  workspace: string;
  bridleHome: string;
  /** A directory outside the workspace, for escape attempts to aim at. */
  outside: string;
  ctx: ToolContext;
  /** Writes files relative to the workspace, creating parents. */
  write(files: Record<string, string | Uint8Array>): void;
  cleanup(): void;
}

/** A shell for tests that must not run anything. */
export const refusingShell: Shell = {
  id: 'refusing',
  run: () => Promise.reject(new Error('this test context has no shell')),
};

export function createTempWorkspace(
  options: { shell?: Shell; signal?: AbortSignal; bridleHomeInside?: boolean } = {},
): TempWorkspace {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'bridle-tools-')));
  const workspace = path.join(root, 'ws');
  const outside = path.join(root, 'outside');
  const bridleHome = options.bridleHomeInside ? path.join(workspace, '.bridle') : path.join(root, 'home');
  for (const dir of [workspace, outside, bridleHome]) fs.mkdirSync(dir, { recursive: true });
  const ctx: ToolContext = {
    workspace,
    bridleHome,
    signal: options.signal ?? new AbortController().signal,
    shell: options.shell ?? refusingShell,
  };
  return {
    root,
    workspace,
    bridleHome,
    outside,
    ctx,
    write(files) {
      for (const [rel, content] of Object.entries(files)) {
        const file = path.join(workspace, rel);
        fs.mkdirSync(path.dirname(file), { recursive: true });
        fs.writeFileSync(file, content);
      }
    },
    cleanup: () => fs.rmSync(root, { recursive: true, force: true }),
  };
}
