/**
 * Reads `$BRIDLE_HOME/config.yaml`, and only that file. Never a file in the
 * workspace: the agent can write there, and a config it wrote could widen
 * its own approvals or turn its sandbox off.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { yaml } from '../../runtime/yaml.js';
import type { z } from 'zod';
import { UsageError } from '../errors.js';
import { ConfigFile, RULES, SETTING_KEYS } from '../../runtime/settings.js';

export const configPath = (home: string) => join(home, 'config.yaml');

export interface LoadedConfig {
  path: string;
  /** False when there is no file: every value then comes from flags, the environment or the defaults. */
  exists: boolean;
  config: ConfigFile;
}

/** Contract: a missing file is an empty config; anything wrong with an existing one throws one `UsageError` line naming the file, the key and the problem. */
export function loadConfig(home: string): LoadedConfig {
  const path = configPath(home);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { path, exists: false, config: {} };
    throw new UsageError(`${path}: cannot read it: ${(err as Error).message}`);
  }
  return { path, exists: true, config: parseConfig(text, path) };
}

/** Contract: pure; throws one `UsageError` line for YAML that does not parse or a config the schema refuses. */
export function parseConfig(text: string, path: string): ConfigFile {
  const doc = yaml().parseDocument(text, { uniqueKeys: true });
  const bad = doc.errors[0];
  if (bad) {
    const at = bad.linePos?.[0];
    const where = at ? `line ${at.line}, column ${at.col}: ` : '';
    throw new UsageError(`${path}: not valid YAML: ${where}${bad.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '')}`);
  }
  const data: unknown = doc.toJS() ?? {};
  if (typeof data !== 'object' || data === null || Array.isArray(data)) throw new UsageError(`${path}: expected a mapping of settings (key: value lines) at the top level`);
  const parsed = ConfigFile.safeParse(data);
  if (parsed.success) return parsed.data;
  throw new UsageError(`${path}: ${describeIssues(parsed.error.issues, data)}`);
}

const KNOWN = `known: ${[...SETTING_KEYS, 'patch', 'profiles'].join(', ')}`;
const KNOWN_IN_PROFILE = `known in a profile: ${['bundles', 'patch', ...SETTING_KEYS].join(', ')}`;

/** The first problem, as `key: problem`; an unknown key first, since a typo is the likeliest cause. */
export function describeIssues(issues: readonly z.core.$ZodIssue[], data: unknown): string {
  const first = issues.find((i) => i.code === 'unrecognized_keys') ?? issues[0]!;
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more problem${issues.length > 2 ? 's' : ''})` : '';
  const path = first.path.map(String);
  if (first.code === 'unrecognized_keys') {
    const key = [...path, first.keys[0]!].join('.');
    // Inside a setting that is a map of its own (sandboxLimits, a patch row): that setting's rule names its keys.
    const within = path[0] === 'profiles' ? path[2] : path[0];
    const known = path.length === 0 ? KNOWN : within && within in RULES ? RULES[within as keyof typeof RULES] : KNOWN_IN_PROFILE;
    return `${key}: unknown key (${known})${more}`;
  }
  // The setting a nested problem belongs to: `allow` for `allow.2`, `maxSteps` for `profiles.fast.maxSteps`.
  const setting = path[0] === 'profiles' ? (path.length >= 3 ? path[2] : 'profiles') : path[0];
  const rule = setting && setting in RULES ? RULES[setting as keyof typeof RULES] : first.message;
  const custom = first.code === 'custom' && first.params?.worded ? first.message : undefined;
  return `${path.join('.') || '(top level)'}: ${custom ?? `${rule} (got ${show(valueAt(data, path))})`}${more}`;
}

function valueAt(data: unknown, path: readonly string[]): unknown {
  let v = data;
  for (const k of path) v = v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined;
  return v;
}

function show(v: unknown): string {
  if (v === undefined) return 'nothing';
  const s = JSON.stringify(v) ?? String(v);
  return s.length > 60 ? `${s.slice(0, 57)}…` : s;
}
