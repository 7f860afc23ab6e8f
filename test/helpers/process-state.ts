/** What a test file can leave changed in the process it shares with other files (shared-setup.ts uses it). */
import { vi } from 'vitest';

export interface ProcessState {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  readonly fakeTimers: boolean;
  readonly writes: readonly unknown[];
}

export const processState = (): ProcessState => ({
  env: { ...process.env },
  cwd: process.cwd(),
  fakeTimers: vi.isFakeTimers(),
  writes: [process.stdout.write, process.stderr.write],
});

/** What changed from `before` to `after`, one line each; empty when nothing did. */
export function leftChanged(before: ProcessState, after: ProcessState): string[] {
  const changed: string[] = [];
  for (const name of new Set([...Object.keys(before.env), ...Object.keys(after.env)]))
    if (before.env[name] !== after.env[name]) changed.push(`process.env.${name} ${after.env[name] === undefined ? 'deleted' : before.env[name] === undefined ? 'set' : 'changed'}`);
  if (before.cwd !== after.cwd) changed.push(`cwd changed to ${after.cwd}`);
  if (!before.fakeTimers && after.fakeTimers) changed.push('fake timers left on');
  if (before.writes.some((w, i) => w !== after.writes[i])) changed.push('process.stdout or process.stderr write left patched');
  return changed;
}
