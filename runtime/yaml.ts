/**
 * The YAML parser, loaded at the first document parsed: a command that reads no YAML file (no config.yaml,
 * no --patch, no skill) does not load the package at its start (ADR 0099). `yaml` is CommonJS, so `require`
 * loads it synchronously where an `import()` would make every caller async.
 */
import { createRequire } from 'node:module';

let loaded: typeof import('yaml') | undefined;

export function yaml(): typeof import('yaml') {
  return (loaded ??= createRequire(import.meta.url)('yaml') as typeof import('yaml'));
}
