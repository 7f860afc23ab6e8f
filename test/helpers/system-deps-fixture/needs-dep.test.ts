/**
 * Run by system-deps.test.ts in its own vitest (the main suite excludes this
 * folder): one dependency present, missing, and missing where it is required.
 */
import path from 'node:path';
import { expect, it } from 'vitest';
import { describeWithSystemDep } from '../system-deps.js';

const bin = process.env.FIXTURE_BIN!;
const empty = process.env.FIXTURE_EMPTY!;
const dep = { command: 'bridle-fixture-tool', package: 'bridle-fixture-pkg' };

describeWithSystemDep('present', dep, (exe) => {
  it('runs with the path it found', () => expect(exe).toBe(path.join(bin, dep.command)));
}, { BRIDLE_SYSTEM_DEPS_PATH: bin });

describeWithSystemDep('missing', dep, () => {
  it('is not run', () => expect.unreachable());
  it('is not run either', () => expect.unreachable());
}, { BRIDLE_SYSTEM_DEPS_PATH: empty });

describeWithSystemDep('required', dep, () => {
  it('is replaced by one failing test', () => expect.unreachable());
}, { BRIDLE_SYSTEM_DEPS_PATH: empty, CI: 'true' });
