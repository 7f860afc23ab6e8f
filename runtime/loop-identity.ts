/**
 * Which loop a session runs, as its `session/start` records it (ADR 0085), and the check a replay makes
 * before it re-drives a log's machines: the same loop, or a refusal by name — never bridle's own loop in
 * place of another.
 */
import type { SessionLoop } from '../log/entries-session.js';
import type { Plugin } from '../plugins/host.js';
import type { ComposedRow } from '../plugins/rows.js';
import { builtinLoop, type AgentLoop } from './agent-loop.js';
import { isModulePath, moduleDigest, type LoadedPlugins } from './catalogue.js';

export const LOOP_ROW = 'loop:agent';

const findRow = (rows: readonly ComposedRow[], id: string): ComposedRow | undefined => {
  for (const r of rows) {
    if (r.id === id) return r;
    const inner = r.rows ? findRow(r.rows, id) : undefined;
    if (inner) return inner;
  }
  return undefined;
};

/**
 * Contract: pure; undefined when the session runs bridle's own loop (base logs stay as they were), else the row
 * that provided it, its module path as composed and the SHA-256 of the file it was loaded from (absent for a
 * module handed in already imported); a loop no module row provided (a caller's plugin) is named by its `name`.
 */
export function loopIdentity(rows: readonly ComposedRow[], loop: AgentLoop, loaded: LoadedPlugins | undefined): SessionLoop | undefined {
  if (loop === builtinLoop) return undefined;
  const row = findRow(rows, LOOP_ROW);
  if (!row || !isModulePath(row.use)) return { row: row?.id ?? 'options', use: loop.name };
  const sha256 = moduleDigest(loaded, row.use);
  return { row: row.id, use: row.use, ...(sha256 ? { sha256 } : {}) };
}

/** A loop a replay is offered: the product's, as `loopIdentity` names it, with the plugin that provides it. */
export interface OfferedLoop {
  identity: SessionLoop;
  plugin: Plugin<any>;
}

/** Contract: pure; the product's loop when a module row provides it (undefined for bridle's own, or a loop from no file). */
export function productLoop(rows: readonly ComposedRow[], loaded: LoadedPlugins): OfferedLoop | undefined {
  const row = findRow(rows, LOOP_ROW);
  if (!row || !isModulePath(row.use)) return undefined;
  const plugin = loaded.get(row.use);
  const sha256 = moduleDigest(loaded, row.use);
  return plugin ? { identity: { row: row.id, use: row.use, ...(sha256 ? { sha256 } : {}) }, plugin } : undefined;
}

/** One line naming a recorded loop, for people. */
export const describeLoop = (l: SessionLoop): string => `row ${l.row}, ${l.use}${l.sha256 ? ` (sha256 ${l.sha256.slice(0, 12)}…)` : ' (no file hash)'}`;

/** Contract: pure; true when the offered loop is the one the log names (row, module path and file hash all equal, a hash present). */
export const sameLoop = (logged: SessionLoop, offered: SessionLoop): boolean => logged.row === offered.row && logged.use === offered.use && logged.sha256 !== undefined && logged.sha256 === offered.sha256;

/**
 * Contract: pure; why a session that ran `logged` may not go on under `offered` (`bridle resume`, ADR 0088), or
 * undefined when they are the same loop: bridle's own on both sides, or the same module file. The codes are replay's.
 */
export function loopChange(logged: SessionLoop | undefined, offered: SessionLoop | undefined): { code: 'LOOP_MISMATCH' | 'LOOP_UNAVAILABLE'; message: string } | undefined {
  if (!logged && !offered) return undefined;
  if (!logged) return { code: 'LOOP_MISMATCH', message: `the log ran bridle's own loop; the product's is ${describeLoop(offered!)}` };
  const named = `the log ran the loop ${describeLoop(logged)}`;
  if (!offered) return { code: 'LOOP_UNAVAILABLE', message: `${named}; the product runs bridle's own loop` };
  if (sameLoop(logged, offered)) return undefined;
  return { code: logged.sha256 ? 'LOOP_MISMATCH' : 'LOOP_UNAVAILABLE', message: `${named}; the product's is ${describeLoop(offered)}` };
}
