import { defineConfig } from 'vitest/config';

// Its own config, so the repository's (reporters, excludes) does not apply; everything it writes goes to FIXTURE_OUT.
export default defineConfig({
  cacheDir: `${process.env.FIXTURE_OUT}/vite`,
  test: {
    root: import.meta.dirname,
    include: ['needs-dep.test.ts'],
    reporters: ['default', ['json', { outputFile: `${process.env.FIXTURE_OUT}/report.json` }]],
  },
});
