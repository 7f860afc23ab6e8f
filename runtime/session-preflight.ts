/**
 * What `createSession` would refuse a continued session for before it opens
 * its log, found without the session's writer claim (ADR 0042): a policy
 * wider than the one the log holds (ADR 0027), or a model, approval or
 * sandbox row this process cannot build. A worker of many that could not run
 * a session must leave its lease alone, so that another worker can take it;
 * claiming first and refusing after would log a takeover it never follows
 * and release the lease to nobody.
 *
 * Only the rows that decide those are mounted (and whatever they inject):
 * no tool, MCP server, subagent or prompt row is built just to be thrown
 * away.
 */
import type { Entry } from '../log/entries.js';
import { APPROVAL, HOOKS, MODEL, PROMPT, SANDBOX, SESSION, TOOLS } from '../ports/index.js';
import { keyId, type KeyLike } from '../ports/service.js';
import type { SessionControl } from '../ports/session.js';
import type { ComposedRow } from '../plugins/rows.js';
import { resolveUse } from './catalogue.js';
import { buildHost } from './host.js';
import { sessionRows } from './session.js';
import type { SessionOptions } from './session-options.js';
import { policyOf, settlePolicy } from './session-policy.js';

/** The services every host has before any row mounts (`buildHost`'s core). */
const CORE = new Set([TOOLS, HOOKS, PROMPT, SESSION].map(keyId));

/** The top-level rows whose plugins provide `wanted`, and those providing what they inject, transitively. */
function rowsFor(rows: readonly ComposedRow[], wanted: readonly KeyLike[], loaded: SessionOptions['loaded']): ComposedRow[] {
  const keys = new Set(wanted.map(keyId));
  const picked = new Set<ComposedRow>();
  for (let grew = true; grew; ) {
    grew = false;
    for (const row of rows) {
      if (picked.has(row) || row.use === 'group') continue;
      const plugin = resolveUse(row, loaded);
      if (!plugin?.provides?.some((k) => keys.has(keyId(k)))) continue;
      picked.add(row);
      grew = true;
      for (const k of plugin.inject ?? []) if (!CORE.has(keyId(k))) keys.add(keyId(k));
    }
  }
  return rows.filter((r) => picked.has(r));
}

/**
 * Contract: throws what `createSession` with these options would throw before it opens the log — a
 * `PolicyWidenedError` (nothing widened without `overridePolicy`, a subagent's never), a `WorkspaceChangedError`
 * (another workspace than the logged one without `moveWorkspace`, ADR 0041), a `CompositionError` for
 * a model, approval or sandbox row that cannot be built — and returns otherwise. Writes nothing, claims nothing;
 * whatever it built is disposed of before it returns.
 */
export function preflightSession(o: SessionOptions & { existing: readonly Entry[] }): void {
  const all = sessionRows(o);
  const rows = rowsFor(all, [MODEL, APPROVAL, SANDBOX], o.loaded);
  const start = o.existing[0];
  const control: SessionControl = {
    id: start?.kind === 'session/start' ? start.id : (o.id ?? ''),
    depth: start?.kind === 'session/start' ? start.depth : (o.depth ?? 0),
    cwd: o.cwd,
    bridleHome: o.bridleHome,
    inject: () => undefined,
    entries: () => o.existing,
    record: () => undefined,
    child: () => {
      throw new Error('a preflight builds no child session');
    },
  };
  const { host } = buildHost(rows, { session: control, ...(o.loaded ? { loaded: o.loaded } : {}) });
  try {
    if (host.has(APPROVAL) && host.has(SANDBOX)) settlePolicy(o.existing, policyOf(host.get(APPROVAL), host.get(SANDBOX)), { override: o.overridePolicy === true, workspace: o.cwd, moveWorkspace: o.moveWorkspace === true });
  } finally {
    host.dispose();
  }
}
