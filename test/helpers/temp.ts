/**
 * Temp dirs a test file makes and leaves to be removed: `tempDir(prefix)` is
 * `mkdtempSync(join(tmpdir(), prefix))`, and every dir it made is removed
 * (recursive, force) when the test file that made it ends: the setup file
 * every test file runs (`temp-setup.ts`, vitest.config.ts) registers the
 * `afterAll`, so a dir made in a test, a hook or at a file's top level goes
 * with its file, in either project. Files run one at a time in a worker, so
 * the dirs in the list are the current file's.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const made: string[] = [];

export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

/** Removes every dir `tempDir` made so far (the setup file calls it after each test file). */
export function removeTempDirs(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}
