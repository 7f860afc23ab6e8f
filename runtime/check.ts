/**
 * A product checked offline, without mounting anything: every row names a
 * known `use`, its config passes that plugin's schema (the parsed config,
 * defaults filled, is what the dump prints), and no two rows provide one
 * service in one scope. `bridle config --dump` and every session command
 * check this before anything runs.
 */
import { type ComposedRow } from '../plugins/rows.js';
import { CompositionError } from '../plugins/composition-error.js';
import { keyId } from '../ports/service.js';
import { childModelUse, knownUses, resolveUse, type LoadedPlugins } from './catalogue.js';

/** A row as checked: its config with the plugin's defaults filled in. */
export interface CheckedRow extends ComposedRow {
  rows?: CheckedRow[];
}

const issueText = (issues: readonly { path: readonly PropertyKey[]; message: string }[]) =>
  issues.map((i) => `${i.path.length ? i.path.map(String).join('.') : 'config'}: ${i.message}`).join('; ');

/** Contract: pure; throws `CompositionError` naming the row, its layer and the problem (for a duplicate, both rows). */
export function checkRows(rows: readonly ComposedRow[], loaded?: LoadedPlugins): CheckedRow[] {
  const walk = (list: readonly ComposedRow[], providers: Map<string, ComposedRow>): CheckedRow[] =>
    list.map((row) => {
      if (row.use === 'group') {
        const isolated = (k: string) => row.isolate === true || (Array.isArray(row.isolate) && row.isolate.includes(k));
        // Inside, an isolated key starts afresh; the others are shared with the enclosing scope.
        const own = new Map([...providers].filter(([k]) => !isolated(k)));
        const inner = walk(row.rows ?? [], own);
        for (const [k, v] of own) if (!isolated(k)) providers.set(k, v);
        return { ...row, rows: inner };
      }
      const plugin = resolveUse(row, loaded);
      if (!plugin) {
        const known = knownUses(row.id);
        throw new CompositionError(row.id, row.from, `unknown use ${JSON.stringify(row.use)}${known.length ? ` (known for ${row.id}: ${known.join(', ')})` : ' (qualify it with its seam, e.g. model/scripted)'}`);
      }
      // The model row a row names for its children is mounted only when a child starts: checked now, as a row is.
      const model = childModelUse(row.config);
      if (model !== undefined && !resolveUse({ id: 'model', use: model }, loaded)) throw new CompositionError(row.id, row.from, `config.model: unknown use ${JSON.stringify(model)} (known for model: ${knownUses('model').join(', ')}, or a module path)`);
      let config = row.config;
      if (plugin.config) {
        const r = plugin.config.safeParse(row.config ?? {});
        if (!r.success) throw new CompositionError(row.id, row.from, `bad config: ${issueText(r.error.issues)}`);
        config = r.data;
      }
      for (const key of (plugin.provides ?? []).map(keyId)) {
        const first = providers.get(key);
        if (first) throw new CompositionError(row.id, row.from, `provides ${key}, which row ${first.id} (${first.from}) provides too: one provider per service`);
        providers.set(key, row);
      }
      const { rows: _rows, ...rest } = row;
      return config === undefined ? rest : { ...rest, config };
    });
  return walk(rows, new Map());
}
