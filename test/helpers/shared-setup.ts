/**
 * Run before every file of the `shared` project (vitest.config.ts), after temp-setup.ts: files there share their
 * worker's process, so a file that leaves the environment, the working directory, fake timers or a patched
 * stdout/stderr behind fails, naming what it left, instead of a later file failing in an order that depends on the
 * run (ADR 0094, ADR 0104).
 */
import { afterAll } from 'vitest';
import { leftChanged, processState } from './process-state.js';

const before = processState();
afterAll(() => {
  const changed = leftChanged(before, processState());
  if (changed.length > 0) throw new Error(`this file shares its process with others and left it changed: ${changed.join('; ')}`);
});
