/**
 * Every machine in `machines/`, found by file name, walked along generated
 * paths: each path is a test (the real machine, fake children, the path's
 * events, the machine's invariants), and the machine's coverage by those
 * paths must be total.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { MachinePath } from './generate.js';
import { runPath, type PathResult } from './run-path.js';
import { describePath, discoverMachines, machineFor, modelFor, pathsOf, runMachine } from './suite.js';

const machines = await discoverMachines();
const NAME_CHARS = 240;

it('finds the machines by file name', () => {
  expect(machines.map((m) => m.name)).toEqual(expect.arrayContaining(['session', 'step', 'tool-call', 'turn']));
});

for (const m of machines) {
  describe(`${m.name} machine`, () => {
    let paths: MachinePath[] = [];
    let failure: unknown;
    try {
      paths = pathsOf(m);
    } catch (err) {
      failure = err;
    }

    it('generates its paths (a finite graph under its model)', () => {
      expect(failure, String(failure)).toBeUndefined();
      expect(paths.length).toBeGreaterThan(0);
    });

    it('has a path model: payloads, outputs and its invariants', () => {
      expect(m.modelled, `add a path model for machines/${m.name}.machine.ts to test/paths/models.ts`).toBe(true);
    });

    // Each path runs once; the coverage test reuses the results (and runs any path a filter skipped).
    const results = new Map<MachinePath, PathResult>();
    const run = (p: MachinePath) => results.get(p) ?? results.set(p, runPath(machineFor(m, p), modelFor(m, p), p)).get(p)!;

    it.each(paths.map((p, i) => ({ p, name: `${i + 1}/${paths.length}: ${describePath(p).slice(0, NAME_CHARS)}` })))('path $name', ({ p }) => {
      expect(run(p).problems).toEqual([]);
    });

    it('every state and every transition is on some generated path', () => {
      const r = runMachine(m, paths, run);
      expect(r.uncoveredStates, 'states no path reaches').toEqual([]);
      expect(r.uncoveredTransitions, 'transitions no path takes').toEqual([]);
      expect(r.statesCovered).toBe(r.states);
      expect(r.transitionsCovered).toBe(r.transitions);
    });
  });
}

const report = fileURLToPath(new URL('../../dist/test/paths/report.js', import.meta.url));
const sources = ['../../machines/', './'].map((d) => fileURLToPath(new URL(d, import.meta.url)));
/** `npm test` builds first; a bare `vitest run` may find no build, or one older than the machines. */
const builtFresh = (): boolean => {
  if (!fs.existsSync(report)) return false;
  const built = fs.statSync(report).mtimeMs;
  return sources.every((d) => fs.readdirSync(d).every((f) => !f.endsWith('.ts') || f.endsWith('.test.ts') || fs.statSync(path.join(d, f)).mtimeMs <= built));
};

describe('npm run paths', () => {
  it.skipIf(!builtFresh())('--json prints only the rows, as JSON, each machine fully covered (skipped without a fresh `npm run build`)', () => {
    // The exit code says whether a path failed, which the tests above report; here only stdout matters.
    const out = spawnSync(process.execPath, [report, '--json'], { encoding: 'utf8' }).stdout;
    const rows = JSON.parse(out) as Record<string, unknown>[];
    expect(rows.length).toBeGreaterThanOrEqual(4);
    for (const r of rows) {
      expect(Object.keys(r).sort()).toEqual(['machine', 'paths', 'states', 'statesCovered', 'transitions', 'transitionsCovered']);
      expect(r.statesCovered).toBe(r.states);
      expect(r.transitionsCovered).toBe(r.transitions);
      expect(r.paths).toBeGreaterThan(0);
    }
  });
});
