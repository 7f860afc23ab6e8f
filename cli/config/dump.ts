/** `bridle config --dump`: the effective configuration, each key with where its value came from. */
import { Document, isScalar, type Pair, type Scalar, type YAMLMap } from 'yaml';
import type { Resolved, Source } from './resolve.js';
import { SETTING_KEYS, type SettingKey } from './schema.js';

export interface DumpedSetting {
  value: unknown;
  source: Source;
  note?: string;
}

export interface Dump {
  file: string;
  fileExists: boolean;
  profile: string | null;
  settings: Record<SettingKey, DumpedSetting>;
}

/** Contract: pure; every setting key, in schema order, `null` for a value nothing sets. */
export function dumpOf(r: Resolved): Dump {
  const settings = {} as Record<SettingKey, DumpedSetting>;
  for (const key of SETTING_KEYS) {
    const s: DumpedSetting = { value: r.values[key] ?? null, source: r.sources[key] };
    const note = r.notes[key] ?? (key === 'model' && r.values.model === undefined ? 'none: pass --model, set BRIDLE_MODEL or model in the config file' : undefined);
    if (note) s.note = note;
    settings[key] = s;
  }
  return { file: r.file, fileExists: r.fileExists, profile: r.profile ?? null, settings };
}

export const dumpJson = (r: Resolved): string => `${JSON.stringify(dumpOf(r), null, 2)}\n`;

/** YAML a person reads: each key's source as a comment on its line (a list or map: on its key's line). */
export function dumpYaml(r: Resolved): string {
  const d = dumpOf(r);
  const values = Object.fromEntries(SETTING_KEYS.map((k) => [k, d.settings[k].value]));
  const doc = new Document(values);
  for (const pair of (doc.contents as YAMLMap).items as Pair<Scalar, unknown>[]) {
    const key = String(pair.key.value) as SettingKey;
    const { source, note } = d.settings[key];
    const comment = ` ${source}${note ? ` (${note})` : ''}`;
    if (isScalar(pair.value)) pair.value.comment = comment;
    else pair.key.comment = comment;
  }
  doc.commentBefore = [
    ' the effective bridle configuration: flag > env > profile > file > default',
    ` config file: ${d.file}${d.fileExists ? '' : ' (not found)'}`,
    ` profile: ${d.profile ?? '(none)'}`,
  ].join('\n');
  return doc.toString();
}
