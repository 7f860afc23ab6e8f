/**
 * The preflight a server runs before it claims a session it does not host (ADR 0042): it throws what
 * `createSession` would throw for the policy or the model, building only the rows that decide those.
 */
import { realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import type { Entry } from '../log/entries.js';
import { LOG_FORMAT } from '../log/entries-session.js';
import { CompositionError } from '../plugins/composition-error.js';
import { base } from '../bundles/base.js';
import { preflightSession } from './session-preflight.js';
import { PolicyWidenedError } from './session-policy.js';
import { tempDir } from '../test/helpers/temp.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function world() {
  const dir = realpathSync(tempDir('bridle-preflight-'));
  dirs.push(dir);
  const script = join(dir, 'script.json');
  writeFileSync(script, JSON.stringify({ responses: [{ text: 'ok' }] }));
  const start: Entry = {
    seq: 1,
    at: '2026-12-01T00:00:00.000Z',
    kind: 'session/start',
    id: 's1',
    cwd: dir,
    model: 'm',
    depth: 0,
    parent: null,
    format: LOG_FORMAT,
    policy: { approval: 'ask', sandbox: 'off', mode: 'full', network: true, allow: [] },
  } as Entry;
  // No tool, MCP or subagent row is built: one that would throw if mounted proves it.
  const rows = [...base.rows.filter((r) => r.id !== 'model' && r.id !== 'sandbox'), { id: 'model', use: 'scripted', config: { file: script } }, { id: 'sandbox', use: 'off' }, { id: 'tool:broken', use: 'no-such-tool' }];
  return { cwd: dir, bridleHome: join(dir, 'home'), rows, existing: [start] };
}

it('a process whose approval would widen the logged one is refused POLICY_WIDENED before anything is claimed; the same policy passes', () => {
  const w = world();
  expect(() => preflightSession({ ...w, settings: { approval: 'ask' } })).not.toThrow();
  let thrown: unknown;
  try {
    preflightSession({ ...w, settings: { approval: 'auto' } });
  } catch (err) {
    thrown = err;
  }
  expect(thrown).toBeInstanceOf(PolicyWidenedError);
  expect((thrown as PolicyWidenedError).code).toBe('POLICY_WIDENED');
  // Narrower is no refusal (it is logged when the session opens), and the override lets a widening through.
  expect(() => preflightSession({ ...w, settings: { approval: 'never' } })).not.toThrow();
  expect(() => preflightSession({ ...w, settings: { approval: 'auto' }, overridePolicy: true })).not.toThrow();
});

it('a model this process cannot build is refused as a CompositionError', () => {
  const w = world();
  const rows = w.rows.map((r) => (r.id === 'model' ? { id: 'model', use: 'scripted', config: { file: join(w.cwd, 'missing.json') } } : r));
  expect(() => preflightSession({ ...w, rows, settings: { approval: 'ask' } })).toThrow(CompositionError);
});
