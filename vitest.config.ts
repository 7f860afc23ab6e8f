import { defineConfig } from 'vitest/config';
import LongestFirstSequencer from './test/helpers/longest-first.js';

const EXCLUDE = ['node_modules/**', 'dist/**', 'examples/flaky-checkout/project/**', 'test/helpers/system-deps-fixture/**'];
/** The unit files, beside the code they test: no module mocked, no global, env or cwd left changed (ADR 0094, 0104). */
const SHARED = [
  '{log,machines,runtime,actors,plugins,safety,tools,replay,visualizations,server,adapters,cli}/**/*.test.ts',
  // test/'s in-process files: the golden logs, the architecture checks, the paths and the sweeps.
  'test/{architecture,golden,helpers,paths,sweep}/**/*.test.ts',
];
/** Unit files that `vi.mock` a module: a mock must not reach another file through a shared module graph. */
const MOCKING = ['adapters/fs/local-toctou.test.ts', 'cli/close-failure.test.ts', 'cli/run-unsaved.test.ts', 'test/golden/ordering-exhibit.test.ts'];

export default defineConfig({
  test: {
    // system-deps-fixture runs in a vitest of its own (system-deps.test.ts).
    exclude: EXCLUDE,
    // Projects (ADR 0094, ADR 0104). The unit files share their workers' module graph (`isolate: false`): they
    // import the same few hundred modules, and importing them afresh per file was two thirds of their time
    // (import 72 s of 164 s isolated, 10 s of 106 s shared, one run). The e2e, fault, conformance, bench and
    // example files keep a fresh graph per file (`isolated`), and so do the unit files that mock a module
    // (`mocking`).
    projects: [
      {
        extends: true,
        // shared-setup.ts fails a file that leaves the env, cwd, fake timers or stdio changed for the next one.
        test: { name: 'shared', include: SHARED, exclude: [...EXCLUDE, ...MOCKING], isolate: false, setupFiles: ['test/helpers/shared-setup.ts'] },
      },
      { extends: true, test: { name: 'isolated', include: ['**/*.test.ts'], exclude: [...EXCLUDE, ...SHARED] } },
      { extends: true, test: { name: 'mocking', include: MOCKING } },
    ],
    // vitest runs one file at a time on a 2-core machine (cores - 1). Most of the suite's time is CLI
    // end-to-end files waiting on processes they spawned, so three files at a time keep both cores busy (ADR
    // 0111: 532 s against two files' 639 s); every test owns its ports (0) and temp dirs, so files do not meet.
    // BRIDLE_TEST_WORKERS overrides.
    maxWorkers: Number(process.env.BRIDLE_TEST_WORKERS ?? 3),
    // The slowest files start first, from a committed table: a clean clone has no duration cache (longest-first.ts).
    sequence: { sequencer: LongestFirstSequencer },
    // Every file's `tempDir` dirs (test/helpers/temp.ts) are removed when the file ends.
    setupFiles: ['test/helpers/temp-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // The JSON report lets .ci/run close on a plain "N passed, N failed" line.
    reporters: ['default', ['json', { outputFile: '.vitest-report.json' }]],
    // `npm run coverage`: v8's own counters, read back through vitest (ADR 0026). Off unless asked for.
    coverage: {
      provider: 'v8',
      include: ['index.ts', '{log,ports,machines,plugins,safety,tools,adapters,actors,runtime,bundles,replay,server,cli,visualizations}/**/*.ts'],
      exclude: ['**/*.test.ts', '**/*.d.ts'],
      reporter: ['text-summary', 'json-summary', 'html'],
      reportsDirectory: 'coverage',
      // A figure to read even when a test fails (it is not a gate).
      reportOnFailure: true,
    },
  },
});
