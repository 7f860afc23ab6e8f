/** One call's progress from two counters (the server's notices, bridle's polls of its task) as one increasing count. */
import { describe, expect, it } from 'vitest';
import type { ToolProgress } from '../../ports/tools.js';
import { increasingProgress } from './progress.js';

const run = (reports: ToolProgress[]) => {
  const out: ToolProgress[] = [];
  const report = increasingProgress((p) => void out.push(p));
  for (const r of reports) report(r);
  return out;
};

describe('increasingProgress', () => {
  it('the server\'s notices and the task\'s polls interleaved (1, 2, 1, 2, 3 as they came) reach the call as 1 to 5, messages kept', () => {
    const out = run([{ progress: 1, message: 'started' }, { progress: 2, message: 'asked' }, { progress: 1, message: 'working' }, { progress: 2 }, { progress: 3, message: 'done' }]);
    expect(out).toEqual([{ progress: 1, message: 'started' }, { progress: 2, message: 'asked' }, { progress: 3, message: 'working' }, { progress: 4 }, { progress: 5, message: 'done' }]);
  });

  it('one source passes unchanged, gaps and totals too', () => {
    const reports = [{ progress: 1, total: 10 }, { progress: 4, total: 10, message: 'x' }, { progress: 10, total: 10 }];
    expect(run(reports)).toEqual(reports);
  });

  it('a total the count has passed is dropped, not contradicted', () => {
    expect(run([{ progress: 3, total: 3 }, { progress: 3, total: 3 }])).toEqual([{ progress: 3, total: 3 }, { progress: 4 }]);
  });
});
