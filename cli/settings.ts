/**
 * The CLI's one settings module: what every session command and `config
 * --dump` compose a product from. Layers, in order, later wins:
 *
 *   bundles (the profile's, default [base]) → the profile's patch →
 *   $BRIDLE_HOME/config.yaml's patch → its settings → the profile's
 *   settings → a --patch file → the environment → the flags
 *
 * Flags, the environment and the file are checked by one schema
 * (`runtime/settings.ts`), so their errors read alike. Configuration is read
 * from `$BRIDLE_HOME` and from files named on the command line, never from
 * the workspace.
 */
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { BUNDLES } from '../bundles/base.js';
import { bundleLayer, composeEntries, Patch, type ComposedRow, type Layer, type PatchEntry, type Row } from '../plugins/rows.js';
import { CompositionError } from '../plugins/composition-error.js';
import { childModelUse, isModulePath, loadRowPlugins, type LoadedPlugins } from '../runtime/catalogue.js';
import { checkRows } from '../runtime/check.js';
import { applySettings, maxDepthSetting, RULES, settingsShape, treeBudgetSetting, type Settings, type SettingsLayer } from '../runtime/settings.js';
import { parseBudget, parseTreeBudget } from '../runtime/subagents/budget.js';
import { describeIssues, loadConfig, type LoadedConfig } from './config/load.js';
import { UsageError, WorkspaceModuleError } from './errors.js';
import { bridleHome } from './home.js';
import { isDatabaseRef } from '../runtime/stores.js';
import { redactText } from '../safety/redact.js';
import { yaml } from '../runtime/yaml.js';

/** The settings flags as commander hands them over: strings (and booleans), unparsed. */
export interface SettingFlags {
  model?: string;
  provider?: string;
  maxOutputTokens?: string;
  reasoningEffort?: string;
  thinkingBudget?: string;
  baseUrl?: string;
  approval?: string;
  allow?: string[];
  sandbox?: string;
  sandboxMode?: string;
  allowNetwork?: boolean;
  allowGitWrites?: boolean;
  maxSteps?: string;
  contextWindow?: string;
  streamIdleMs?: string;
  streamTotalMs?: string;
  maxDepth?: string;
  treeBudget?: string;
  budget?: string;
  store?: string;
  leaseMs?: string;
  profile?: string;
  /** A one-off overlay: a YAML or JSON file with a `patch:` list. */
  patch?: string;
  /** Let `run --session` and `resume` widen the policy the session logged (ADR 0027); never a subagent's. */
  overridePolicy?: boolean;
  /** Let a continued session run in another workspace than its log's, logged (ADR 0041). */
  moveWorkspace?: boolean;
}

type FlagKey = keyof Settings | 'maxDepth' | 'treeBudget';
const FLAGS: Record<FlagKey, string> = {
  model: '--model',
  provider: '--provider',
  maxOutputTokens: '--max-output-tokens',
  reasoningEffort: '--reasoning-effort',
  thinkingBudget: '--thinking-budget',
  baseUrl: '--base-url',
  approval: '--approval',
  allow: '--allow',
  sandbox: '--sandbox',
  sandboxMode: '--sandbox-mode',
  allowNetwork: '--allow-network',
  allowGitWrites: '--allow-git-writes',
  sandboxLimits: '--sandbox-limits',
  maxSteps: '--max-steps',
  contextWindow: '--context-window',
  contextWindows: '--context-windows',
  streamIdleMs: '--stream-idle-ms',
  streamTotalMs: '--stream-total-ms',
  maxDepth: '--max-depth',
  treeBudget: '--tree-budget',
  budget: '--budget',
  store: '--store',
  leaseMs: '--lease-ms',
};
const NUMERIC = new Set<FlagKey>(['maxOutputTokens', 'thinkingBudget', 'maxSteps', 'contextWindow', 'streamIdleMs', 'streamTotalMs', 'maxDepth', 'leaseMs']);
const schemaOf = (key: FlagKey): z.ZodType => (key === 'maxDepth' ? maxDepthSetting : key === 'treeBudget' ? treeBudgetSetting : settingsShape[key]);

/** One value checked by the same schema the file is; the error names where it came from, in the file's words. */
function checked(key: FlagKey, raw: unknown, where: string): unknown {
  let value = NUMERIC.has(key) && typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : raw;
  if ((key === 'treeBudget' || key === 'budget') && typeof raw === 'string') {
    try {
      value = key === 'budget' ? parseBudget(raw) : parseTreeBudget(raw);
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
  }
  const r = schemaOf(key).safeParse(value);
  if (r.success) return r.data;
  const worded = r.error.issues.find((i) => i.code === 'custom' && (i.params as { worded?: boolean } | undefined)?.worded);
  throw new UsageError(worded ? `${where}: ${worded.message}` : `${where} ${RULES[key]} (got ${JSON.stringify(raw)})`);
}

/** Contract: throws `UsageError` for a value the schema refuses, worded as the file's error would be. */
export function flagSettings(f: SettingFlags): SettingsLayer['settings'] {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(FLAGS) as FlagKey[]) {
    const raw = (f as Record<string, unknown>)[key];
    if (raw !== undefined) out[key] = checked(key, raw, FLAGS[key]);
  }
  // A directory on the command line is the shell's: relative to where bridle runs.
  if (typeof out.store === 'string' && !isDatabaseRef(out.store)) out.store = resolve(out.store);
  if (out.sandbox === 'off' && out.sandboxMode !== undefined) throw new UsageError('--sandbox-mode needs --sandbox bwrap: with --sandbox off nothing is confined');
  return out as SettingsLayer['settings'];
}

/** `BRIDLE_MODEL`, `OPENAI_BASE_URL`; an empty variable counts as unset, as a shell user expects of `FOO= bridle …`. */
export function envSettings(env: NodeJS.ProcessEnv): Settings {
  const out: Settings = {};
  if (env.BRIDLE_MODEL) out.model = checked('model', env.BRIDLE_MODEL, 'BRIDLE_MODEL:') as string;
  if (env.OPENAI_BASE_URL) out.baseUrl = checked('baseUrl', env.OPENAI_BASE_URL, 'OPENAI_BASE_URL:') as string;
  return out;
}

/** A patch's module paths made absolute against the file that wrote them: a row's `use`, and its children's model row's (ADR 0077). */
function anchored(patch: readonly PatchEntry[], dir: string): PatchEntry[] {
  const at = (use: string) => (isModulePath(use) && !isAbsolute(use) && !use.startsWith('file:') ? resolve(dir, use) : use);
  const fix = (e: PatchEntry): PatchEntry => {
    if ('remove' in e) return e;
    const rows = e.rows?.map((r) => fix(r as PatchEntry) as Row);
    const model = childModelUse(e.config);
    const config = model === undefined ? e.config : { ...(e.config as object), model: { ...(e.config as { model: object }).model, use: at(model) } };
    return { ...e, use: at(e.use), ...(config !== undefined ? { config } : {}), ...(rows ? { rows } : {}) };
  };
  return patch.map(fix);
}

/** Contract: throws one `UsageError` line naming the file for a file that cannot be read, parsed, or is not `{ patch: [...] }`. */
export function readPatchFile(path: string, what = `--patch ${path}`): PatchEntry[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new UsageError(`${what}: cannot read it: ${(err as Error).message}`);
  }
  const doc = yaml().parseDocument(text, { uniqueKeys: true });
  if (doc.errors[0]) throw new UsageError(`${what}: not valid YAML or JSON: ${doc.errors[0].message.split('\n')[0]}`);
  const data: unknown = doc.toJS();
  const parsed = z.strictObject({ patch: Patch }).safeParse(data);
  if (!parsed.success) throw new UsageError(`${what}: ${describeIssues(parsed.error.issues, data)}`);
  return anchored(parsed.data.patch, dirname(resolve(path)));
}

/** Where a user's bundle lives: a directory in `$BRIDLE_HOME/bundles`, its patch file and the modules it mounts (never the workspace). */
export const userBundleFile = (home: string, name: string) => join(home, 'bundles', name, 'bundle.yaml');

/**
 * A profile's bundle as the layer that stacks it (ADR 0066): a built-in one
 * (`bundles/`), else the user's `$BRIDLE_HOME/bundles/<name>/bundle.yaml`,
 * its module paths taken from its own directory. Contract: throws
 * `UsageError` for a name that is neither (or not a plain name); one id
 * twice in it is `composeEntries`' `DuplicateRowError`.
 */
export function bundleOf(name: string, home: string, fromProfile: string): Layer {
  const builtin = BUNDLES.get(name);
  if (builtin) return bundleLayer(name, builtin.rows);
  const file = userBundleFile(home, name);
  if (!/^[a-z0-9][a-z0-9-]*$/.test(name) || !existsSync(file)) {
    throw new UsageError(`${fromProfile}: bundles: no bundle named ${JSON.stringify(name)} (built in: ${[...BUNDLES.keys()].join(', ')}; yours go in ${join(home, 'bundles', '<name>', 'bundle.yaml')})`);
  }
  return { from: `bundle ${name}`, patch: readPatchFile(file, `bundle ${name} (${file})`), bundle: true };
}

/** What a session command works from: the composed rows, where each came from, and what composing them warned about. */
export interface Product {
  home: string;
  file: LoadedConfig;
  profile?: string;
  rows: ComposedRow[];
  warnings: string[];
  loaded: LoadedPlugins;
  /** The settings the flags gave, and only those: going on with a session, they are what may change its logged policy (ADR 0027). */
  flagged: SettingsLayer['settings'];
  overridePolicy?: boolean;
  /** Let a continued session run in another workspace than its log's, logged (ADR 0041). */
  moveWorkspace?: boolean;
}

export interface ComposeOptions {
  env?: NodeJS.ProcessEnv;
  /** `resume`: the model the session logged takes the place of one that only the bundle or the config file named. */
  loggedModel?: string;
  /** The workspace the command runs in, when known before composing: a row module inside it is refused before it is imported. */
  workspace?: string;
}

const realOr = (p: string) => (existsSync(p) ? realpathSync(p) : resolve(p));
const within = (dir: string, p: string) => {
  const rel = relative(dir, p);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
};

/**
 * Row modules (a row's `use`, its children's model row's) that lie inside the workspace, where the agent can
 * write, are refused (ADR 0077): one it rewrote would run, unconfined, at the next start. One inside
 * `$BRIDLE_HOME` is the home's, even when the workspace holds the home. Contract: throws `WorkspaceModuleError` (a
 * `UsageError`) naming the row.
 */
export function refuseWorkspaceModules(rows: readonly ComposedRow[], workspace: string, home: string): void {
  if (!existsSync(workspace)) return;
  const ws = realpathSync(workspace);
  const own = realOr(home);
  for (const row of rows) {
    if (row.rows) refuseWorkspaceModules(row.rows, workspace, home);
    for (const use of [row.use, childModelUse(row.config)]) {
      if (use === undefined || !isModulePath(use)) continue;
      const file = realOr(use.startsWith('file:') ? fileURLToPath(use) : use);
      if (within(ws, file) && !within(own, file)) throw new WorkspaceModuleError(`row ${row.id} (${row.from}): module ${use} is inside the workspace ${ws}, where the agent can write; keep row modules in $BRIDLE_HOME or beside a patch file outside it`);
    }
  }
}

/** The profile a `--profile` names. Contract: throws `UsageError` naming the known ones when there is none. */
function profileOf(name: string | undefined, file: LoadedConfig) {
  if (name === undefined) return undefined;
  const profiles = file.config.profiles ?? {};
  if (Object.hasOwn(profiles, name)) return profiles[name]!;
  const known = Object.keys(profiles);
  const where = file.exists ? file.path : `${file.path} (there is no such file)`;
  throw new UsageError(`--profile ${name}: no such profile in ${where}${known.length ? `; profiles: ${known.join(', ')}` : ''}`);
}

const settingsIn = (o: object): Settings => Object.fromEntries(Object.entries(o).filter(([k]) => k in settingsShape)) as Settings;

/**
 * Composes the product offline, checks it, and imports the plugin modules it
 * names. Contract: throws `UsageError` (exit 2) for a bad flag, file, profile
 * or row, naming where; never runs a session.
 */
export async function composeProduct(flags: SettingFlags, o: ComposeOptions = {}): Promise<Product> {
  const env = o.env ?? process.env;
  const home = bridleHome(env);
  const file = loadConfig(home);
  const profile = profileOf(flags.profile, file);
  const fromProfile = `profile ${flags.profile}`;
  let layers: Layer[];
  let composed;
  try {
    layers = (profile?.bundles ?? ['base']).map((name) => bundleOf(name, home, fromProfile));
  } catch (err) {
    throw asUsage(err);
  }
  if (profile?.patch) layers.push({ from: fromProfile, patch: anchored(profile.patch, home) });
  if (file.config.patch) layers.push({ from: 'home', patch: anchored(file.config.patch, home) });
  try {
    composed = composeEntries({ from: 'bundles', rows: [] }, ...layers);
  } catch (err) {
    throw asUsage(err);
  }
  const settings: SettingsLayer[] = [{ from: 'home', settings: settingsIn(file.config) }];
  if (profile) settings.push({ from: fromProfile, settings: settingsIn(profile) });
  let rows = applySettings(composed.rows, settings);
  const warnings = [...composed.warnings, ...rows.warnings];
  let current = rows.rows;
  if (flags.patch) {
    const overlay = composeEntries({ from: 'composed', rows: current as Row[] }, { from: `patch ${flags.patch}`, patch: readPatchFile(flags.patch) });
    current = overlay.rows.map((r, i) => (r.from === 'composed' ? { ...r, from: current.find((c) => c.id === r.id)?.from ?? current[i]!.from } : r));
    warnings.push(...overlay.warnings);
  }
  const late: SettingsLayer[] = [];
  if (o.loggedModel) {
    const row = current.find((r) => r.id === 'model');
    if (row && (row.from.startsWith('bundle ') || row.from === 'home')) late.push({ from: 'log', settings: { model: o.loggedModel } });
  }
  const flagged = flagSettings(flags);
  late.push({ from: 'env', settings: envSettings(env) }, { from: 'flag', settings: flagged });
  rows = applySettings(current, late);
  warnings.push(...rows.warnings);
  if (o.workspace !== undefined) refuseWorkspaceModules(rows.rows, o.workspace, home);
  const loaded = await loadRowPlugins(rows.rows).catch((err: unknown) => {
    throw new UsageError((err as Error).message);
  });
  let checked: ComposedRow[];
  try {
    checked = checkRows(rows.rows, loaded);
  } catch (err) {
    throw asUsage(err);
  }
  // A warning may quote a row's value (a URL with its password): shown redacted wherever it is printed.
  return { home, file, ...(flags.profile !== undefined ? { profile: flags.profile } : {}), rows: checked, warnings: warnings.map(redactText), loaded, flagged, ...(flags.overridePolicy ? { overridePolicy: true } : {}), ...(flags.moveWorkspace ? { moveWorkspace: true } : {}) };
}

/**
 * The `store` row a reader command (`replay`, `sessions`, `fork`) works from: composed exactly as for `run` —
 * bundle, `$BRIDLE_HOME/config.yaml` (its `store:` setting or a `store` row), profile, environment, `--store` —
 * and only that row kept (a reader runs no model and no tool). Contract: throws `UsageError` as `composeProduct`.
 */
export async function composeStoreRows(flags: Pick<SettingFlags, 'store' | 'leaseMs' | 'profile'>, o: ComposeOptions = {}): Promise<ComposedRow[]> {
  const product = await composeProduct({ ...(flags.store !== undefined ? { store: flags.store } : {}), ...(flags.leaseMs !== undefined ? { leaseMs: flags.leaseMs } : {}), ...(flags.profile !== undefined ? { profile: flags.profile } : {}) }, o);
  return product.rows.filter((r) => r.id === 'store');
}

const asUsage = (err: unknown) => (err instanceof CompositionError ? new UsageError(err.message) : err);

/** The settings flags' help lines, for the commands that take them. */
export const SETTING_FLAG_NAMES = FLAGS;
