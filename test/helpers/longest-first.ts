import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { fileSeconds } from './file-durations.js';

/**
 * Orders paths by their known duration, longest first; a path without one keeps its place from `fallback`
 * after every known one. Pure, so that the order is tested without a vitest.
 */
export function longestFirst<T>(items: readonly T[], pathOf: (item: T) => string, seconds: ReadonlyMap<string, number>): T[] {
  const placed = items.map((item, index) => ({ item, index, weight: seconds.get(pathOf(item)) ?? -1 }));
  placed.sort((a, b) => b.weight - a.weight || a.index - b.index);
  return placed.map((p) => p.item);
}

/**
 * vitest's own order (failed first, then by cached duration, else by file size) needs a duration cache that a
 * clean CI clone never has, so a 97 s file could start last and run alone for a minute and a half. This starts
 * the committed slow files first (test/helpers/file-durations.ts), longest first, on every machine.
 */
export default class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const byVitest = await super.sort(files);
    return longestFirst(byVitest, (spec) => relative(root, spec.moduleId).split('\\').join('/'), fileSeconds);
  }
}
