import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['**/*.test.ts'],
    // system-deps-fixture runs in a vitest of its own (system-deps.test.ts).
    exclude: ['node_modules/**', 'dist/**', 'examples/flaky-checkout/project/**', 'test/helpers/system-deps-fixture/**'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // The JSON report lets .ci/run close on a plain "N passed, N failed" line.
    reporters: ['default', ['json', { outputFile: '.vitest-report.json' }]],
  },
});
