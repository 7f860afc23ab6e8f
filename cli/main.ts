#!/usr/bin/env node
/**
 * The `bridle` command. `--version` answers before anything heavy is loaded,
 * so it measures the cold start of node itself plus this file.
 */
import { readFileSync } from 'node:fs';

// A reader that goes away (`bridle run --json … | head`) must not crash a turn mid-way: output is dropped, the log is kept.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
  });
}

const argv = process.argv.slice(2);
if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  process.stdout.write(`${pkg.version}\n`);
} else {
  const { main } = await import('./program.js');
  process.exitCode = await main(argv);
}
