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
  // The soak's fault-injection hook (ADR 0043): looked at only when its variables are set; absent from the package.
  if (process.env.BRIDLE_SOAK_KILL_AT || process.env.BRIDLE_SOAK_STATES) await loadSoakHook();
  const { main } = await import('./program.js');
  process.exitCode = await main(argv);
  // Spans and metrics still on their way to a collector (ADR 0055, 0058) go before the process does; loaded only if tracing ran.
  const otlp = process.env.OTEL_EXPORTER_OTLP_ENDPOINT || process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || process.env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT;
  if (otlp) await (await import('../runtime/catalogue.js')).flushHostPlugins();
}

async function loadSoakHook(): Promise<void> {
  let hook: typeof import('./soak-kill.js');
  try {
    hook = await import('./soak-kill.js');
  } catch {
    process.stderr.write('bridle: warning: BRIDLE_SOAK_KILL_AT / BRIDLE_SOAK_STATES is set, but this build has no soak hook; ignored\n');
    return;
  }
  try {
    hook.installSoakHook(process.env);
  } catch (err) {
    process.stderr.write(`bridle: ${(err as Error).message}\n`);
    process.exit(2);
  }
}
