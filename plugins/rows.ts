/**
 * The product as rows. A row is `{ id, use, config?, disabled?, isolate? }`
 * (a group adds `rows`); a bundle is a list of rows with stable ids; a patch
 * is a list of entries that replace a row by id (whole: no deep merge),
 * insert a new one, or remove one. Layers compose strictly in order, and
 * every row remembers the layer that last put it there.
 */
import { z } from 'zod';
import type { ChildModel } from '../ports/subagents.js';
import { CompositionError, DuplicateRowError } from './composition-error.js';

/** A host-conditional predicate: one patch file mounts different rows per environment. */
export const Predicate = z.union([
  z.strictObject({ env: z.string().min(1) }).describe('disabled while this variable is set and not empty'),
  z.strictObject({ notEnv: z.string().min(1) }).describe('disabled unless this variable is set and not empty'),
  z.strictObject({ tty: z.boolean() }).describe('disabled when standard input is (true) or is not (false) a terminal'),
]);
export type Predicate = z.infer<typeof Predicate>;

const Isolate = z.union([z.boolean(), z.array(z.string().min(1))]);

export interface Row {
  id: string;
  /** A built-in provider or plugin name, or a module path (`./x.js`, `/abs/x.js`) whose default export is a plugin. */
  use: string;
  config?: unknown;
  disabled?: boolean | Predicate;
  /** On a group: its services stay inside it (all of them, or the keys listed). */
  isolate?: boolean | string[];
  /** A group's rows (`use: 'group'`). */
  rows?: Row[];
}

/** A row's fields, shared by the row itself and the patch entries that replace or insert one. */
const rowShape = () => ({
  id: z.string().min(1),
  use: z.string().min(1),
  config: z.unknown().optional(),
  disabled: z.union([z.boolean(), Predicate]).optional(),
  isolate: Isolate.optional(),
  rows: z.array(RowSchema).optional(),
});

export const RowSchema: z.ZodType<Row> = z.lazy(() => z.strictObject(rowShape()));

/** A child's model in a row's config (ADR 0066): a model id as `--model` takes it, or the child's whole `model` row. */
export const ChildModelConfig: z.ZodType<ChildModel> = z.union([z.string().min(1), z.strictObject({ use: z.string().min(1), config: z.unknown().optional() })]);

/** The config of the rows that start in-process children (`subagent:spawn|fork`, `tool:delegate`): the model they run on. */
export const InProcessConfig = z.strictObject({ model: ChildModelConfig.optional() });
export type InProcessConfig = z.infer<typeof InProcessConfig>;

/** One entry of a patch: replace (the default), insert, or remove. */
export const PatchEntry = z.union([
  z.strictObject({ id: z.string().min(1), remove: z.literal(true) }),
  z.strictObject({
    insert: z.literal(true),
    ...rowShape(),
    /** Where it goes: right after (or before) the row with this id, in that row's list; default: the end of the top list. */
    after: z.string().min(1).optional(),
    before: z.string().min(1).optional(),
  }),
  z.strictObject(rowShape()),
]);
export type PatchEntry = z.infer<typeof PatchEntry>;
export const Patch = z.array(PatchEntry);

/** A layer of composition and what it is called in provenance (`bundle base`, `profile ci`, `home`, `patch ./ci.yaml`, `flag`, `env`). */
export interface Layer {
  from: string;
  patch: readonly PatchEntry[];
  /**
   * A bundle's layer (ADR 0066): a row whose id an earlier bundle has replaces it, one with a new id is added
   * at the end (no `insert: true` needed), and one id given twice in it is a `DuplicateRowError`.
   */
  bundle?: boolean;
}

/** A composed row: where it came from, and its group's rows composed alike. */
export interface ComposedRow extends Omit<Row, 'rows'> {
  from: string;
  rows?: ComposedRow[];
}

export interface Composition {
  rows: ComposedRow[];
  warnings: string[];
}

const stamp = (row: Row, from: string): ComposedRow => {
  const { rows, ...rest } = row;
  return { ...rest, from, ...(rows ? { rows: rows.map((r) => stamp(r, from)) } : {}) };
};

/** The list holding `id` and its index there, searching groups too. */
function locate(rows: ComposedRow[], id: string): { list: ComposedRow[]; index: number } | undefined {
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i]!;
    if (r.id === id) return { list: rows, index: i };
    if (r.rows) {
      const inner = locate(r.rows, id);
      if (inner) return inner;
    }
  }
  return undefined;
}

function* ids(rows: readonly Row[]): Generator<string> {
  for (const r of rows) {
    yield r.id;
    if (r.rows) yield* ids(r.rows);
  }
}

/** Contract: throws `DuplicateRowError` when one list of rows uses an id twice (ids are unique across groups too). */
export function checkUniqueIds(rows: readonly Row[], from: string): void {
  const seen = new Set<string>();
  for (const id of ids(rows)) {
    if (seen.has(id)) throw new DuplicateRowError(id, from);
    seen.add(id);
  }
}

/** A bundle's rows as the layer that stacks them over the bundles before it. Contract: throws `DuplicateRowError` for an id it names twice. */
export function bundleLayer(name: string, rows: readonly Row[]): Layer {
  checkUniqueIds(rows, `bundle ${name}`);
  return { from: `bundle ${name}`, patch: rows, bundle: true };
}

/**
 * Applies the layers in order over the base rows: a patch entry whose id
 * matches replaces that row whole; `insert` adds one; `remove` drops one.
 * In a bundle's layer an unmatched row is added instead (ADR 0066).
 * Contract: pure; an unmatched replace or remove only warns (never throws);
 * an insert of an id that exists, or next to one that does not, throws
 * `CompositionError` naming the row and the layer; one id twice in the base
 * rows or in one bundle's layer throws `DuplicateRowError`.
 */
export function composeEntries(base: { from: string; rows: readonly Row[] }, ...layers: readonly Layer[]): Composition {
  checkUniqueIds(base.rows, base.from);
  const rows = base.rows.map((r) => stamp(r, base.from));
  const warnings: string[] = [];
  for (const layer of layers) {
    if (layer.bundle) checkUniqueIds(layer.patch.filter((e) => !('remove' in e)) as Row[], layer.from);
    for (const entry of layer.patch) {
      const at = locate(rows, entry.id);
      if ('remove' in entry) {
        if (at) at.list.splice(at.index, 1);
        else warnings.push(`${layer.from}: remove of row ${entry.id}, which no earlier layer has; nothing removed`);
        continue;
      }
      if ('insert' in entry) {
        const { insert: _i, after, before, ...row } = entry;
        if (at) throw new CompositionError(entry.id, layer.from, 'insert of an id that already exists (to replace it, leave out insert: true)');
        if (after !== undefined && before !== undefined) throw new CompositionError(entry.id, layer.from, 'give after or before, not both');
        const anchor = after ?? before;
        const placed = stamp(row, layer.from);
        if (row.rows) checkUniqueIds([row], layer.from);
        for (const inner of ids(placed.rows ?? [])) if (locate(rows, inner)) throw new CompositionError(inner, layer.from, 'insert of an id that already exists');
        if (anchor === undefined) {
          rows.push(placed);
          continue;
        }
        const near = locate(rows, anchor);
        if (!near) throw new CompositionError(entry.id, layer.from, `insert ${after !== undefined ? 'after' : 'before'} row ${anchor}, which does not exist`);
        near.list.splice(after !== undefined ? near.index + 1 : near.index, 0, placed);
        continue;
      }
      if (!at && layer.bundle) {
        if (entry.rows) for (const inner of ids(entry.rows)) if (locate(rows, inner)) throw new CompositionError(inner, layer.from, 'insert of an id that already exists');
        rows.push(stamp(entry, layer.from));
        continue;
      }
      if (!at) {
        warnings.push(`${layer.from}: replace of row ${entry.id}, which no earlier layer has; ignored (to add it, use insert: true)`);
        continue;
      }
      at.list[at.index] = stamp(entry, layer.from);
    }
  }
  return { rows, warnings };
}

/** What a predicate reads of the host. */
export interface HostFacts {
  env: Readonly<Record<string, string | undefined>>;
  tty: boolean;
}

const isSet = (env: HostFacts['env'], name: string) => (env[name] ?? '') !== '';

/** Contract: pure. */
export function isDisabled(row: Pick<Row, 'disabled'>, host: HostFacts): boolean {
  const d = row.disabled;
  if (d === undefined || d === false) return false;
  if (d === true) return true;
  if ('env' in d) return isSet(host.env, d.env);
  if ('notEnv' in d) return !isSet(host.env, d.notEnv);
  return host.tty === d.tty;
}

/** The rows the host mounts: disabled rows (and groups) left out. Contract: pure. */
export function enabledRows(rows: readonly ComposedRow[], host: HostFacts): ComposedRow[] {
  const out: ComposedRow[] = [];
  for (const r of rows) {
    if (isDisabled(r, host)) continue;
    out.push(r.rows ? { ...r, rows: enabledRows(r.rows, host) } : r);
  }
  return out;
}
