import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['**/*.test.ts'],
    exclude: ['node_modules/**', 'dist/**', 'examples/flaky-checkout/project/**'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // The JSON report lets .ci/run close on a plain "N passed, N failed" line.
    reporters: ['default', ['json', { outputFile: '.vitest-report.json' }]],
  },
});
