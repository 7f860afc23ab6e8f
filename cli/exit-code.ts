/** A failure of a command as one line on stderr and its exit code: never a stack trace, except for a bug. */
import { CommanderError } from 'commander';
import { SessionLockedError, LogAccessError } from '../log/errors.js';
import { CompositionError } from '../plugins/composition-error.js';
import { ProviderSetupError } from '../ports/provider.js';
import { isStoreSetupFailure } from '../ports/store.js';
import { redactText } from '../safety/redact.js';
import { SetupError, UsageError } from './errors.js';
import { visible } from './visible.js';

/**
 * The exit code of a command that threw `err`, after saying why on stderr: 2 a usage error or a log that
 * cannot be used, 1 a setup problem (or a bug, with its stack).
 */
export function exitCodeOf(err: unknown): number {
  // An error may echo what a row holds (a store URL with its password, a server's answer quoting a header): redacted.
  const say = (line: string) => process.stderr.write(redactText(line));
  if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : 2;
  if (err instanceof UsageError) {
    say(`bridle: ${err.message}\n`);
    return 2;
  }
  // Another process writes this session (one writer per session): one line naming it, exit 2.
  if (err instanceof SessionLockedError) {
    say(`bridle: ${err.code}: ${visible(err.message)}\n`);
    return 2;
  }
  // The session store cannot be used from here (a database out of reach, or at a newer schema): a setup problem, exit 1.
  if (isStoreSetupFailure(err)) {
    say(`bridle: ${err.code}: ${visible(err.message)}\n`);
    return 1;
  }
  // A feature whose optional packages this install lacks (the Postgres driver, the OpenTelemetry exporters; ADR 0070): what to install, exit 1.
  if ((err as { code?: unknown } | null)?.code === 'PACKAGE_MISSING') {
    say(`bridle: PACKAGE_MISSING: ${(err as Error).message}\n`);
    return 1;
  }
  if (err instanceof SetupError) {
    say(`bridle: ${err.message}\n`);
    return 1;
  }
  // A row that cannot mount here because the environment is not set up for it (no API key): a setup problem, exit 1.
  if (err instanceof CompositionError && err.cause instanceof ProviderSetupError) {
    say(`bridle: ${err.cause.message}\n`);
    return 1;
  }
  if (err instanceof CompositionError) {
    say(`bridle: ${err.message}\n`);
    return 2;
  }
  if (err instanceof LogAccessError) {
    say(`bridle: ${err.code}: ${err.message}\n`);
    return 2;
  }
  say(`bridle: unexpected failure: ${(err as Error)?.stack ?? String(err)}\n`);
  return 1;
}
