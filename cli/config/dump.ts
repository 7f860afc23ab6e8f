/**
 * `bridle config --dump`: the composed product, each row with the layer that
 * put it there. YAML for people (a `# from:` comment before each row), JSON
 * for programs: `{ file, profile, rows: [{ id, use, config, from, disabled? }], warnings }`.
 * Secret-looking values are shown as `***` in both (`safety/redact.ts`).
 */
import { stringify } from 'yaml';
import { enabledRows, type ComposedRow, type HostFacts } from '../../plugins/rows.js';
import type { Product } from '../settings.js';
import { redactConfig } from '../../safety/redact.js';

export interface DumpedRow {
  id: string;
  use: string;
  config?: unknown;
  from: string;
  disabled?: unknown;
  isolate?: unknown;
  rows?: DumpedRow[];
}

export interface Dump {
  file: string;
  fileExists: boolean;
  profile: string | null;
  rows: DumpedRow[];
  warnings: string[];
}

const dumped = (r: ComposedRow): DumpedRow => ({
  id: r.id,
  use: r.use,
  // Shown, never handed back: an env token, an Authorization header, a store URL's password are `***` (ADR 0039).
  ...(r.config !== undefined ? { config: redactConfig(r.config) } : {}),
  from: r.from,
  ...(r.disabled !== undefined ? { disabled: r.disabled } : {}),
  ...(r.isolate !== undefined ? { isolate: r.isolate } : {}),
  ...(r.rows ? { rows: r.rows.map(dumped) } : {}),
});

/** Contract: pure but for `facts`; the rows this host would mount (a row its `disabled` predicate turns off is left out). */
export function dumpOf(p: Product, facts: HostFacts): Dump {
  return { file: p.file.path, fileExists: p.file.exists, profile: p.profile ?? null, rows: enabledRows(p.rows, facts).map(dumped), warnings: p.warnings };
}

export const dumpJson = (d: Dump): string => `${JSON.stringify(d, null, 2)}\n`;

const isEmpty = (v: unknown) => v !== null && typeof v === 'object' && Object.keys(v).length === 0;

function rowYaml(r: DumpedRow, indent: string): string {
  const { from, rows, ...all } = r;
  // An empty config says nothing a person needs to read; the JSON keeps it.
  const { config, ...rest } = all;
  if (config !== undefined && !isEmpty(config)) Object.assign(rest, { config });
  const body = stringify([rest], { lineWidth: 0 }).trimEnd().split('\n');
  const lines = [`${indent}# from: ${from}`, ...body.map((l) => `${indent}${l}`)];
  if (rows) lines.push(`${indent}  rows:`, ...rows.map((x) => rowYaml(x, `${indent}    `)));
  return lines.join('\n');
}

export function dumpYaml(d: Dump): string {
  const head = [
    '# the composed bridle product: bundles → profile → home (config.yaml) → --patch → env → flags; later layers win',
    `# config file: ${d.file}${d.fileExists ? '' : ' (not found)'}`,
    `# profile: ${d.profile ?? '(none)'}`,
    ...d.warnings.map((w) => `# warning: ${w}`),
  ];
  return `${head.join('\n')}\nrows:\n${d.rows.map((r) => rowYaml(r, '  ')).join('\n')}\n`;
}
