/**
 * The effective configuration, and where each value came from. Precedence,
 * per key: flag > environment (`BRIDLE_MODEL`, `OPENAI_BASE_URL`) > the
 * chosen profile > the config file > the built-in default. A list (`allow`)
 * is taken whole from the first layer that sets it, never merged, so every
 * layer can narrow what the ones below allow; the `contextWindows` map is
 * merged per model (profile entries over file entries).
 */
import { knownContextWindow } from '../../runtime/context/windows.js';
import type { ApprovalPolicy } from '../../ports/approval.js';
import { resolveSandboxLimits, type SandboxLimits, type SandboxMode } from '../../safety/sandbox.js';
import { DEFAULT_BASE_URL, DEFAULT_STREAM_LIMITS } from '../../adapters/model/openai.js';
import { UsageError } from '../errors.js';
import { envLayer, fileLayer, flagLayer, profileLayer } from './layers.js';
import type { LoadedConfig } from './load.js';
import type { SettingKey, Settings } from './schema.js';

export type Source = 'flag' | 'env' | 'profile' | 'file' | 'default';

/** The flags that are also settings, as commander hands them over (strings, before parsing). */
export interface ConfigFlags {
  model?: string;
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
  profile?: string;
}

export interface Effective {
  model?: string;
  baseUrl: string;
  approval: ApprovalPolicy;
  allow: string[];
  sandbox: 'bwrap' | 'off';
  sandboxMode: SandboxMode;
  allowNetwork: boolean;
  allowGitWrites: boolean;
  /** Whole: each limit from the first layer that sets the map, the rest from the defaults. */
  sandboxLimits: SandboxLimits;
  maxSteps: number;
  /** For the effective model; undefined when nothing says (compaction then waits for an overflow to learn it). */
  contextWindow?: number;
  contextWindows: Record<string, number>;
  /** Model stream deadlines (adapters/model/openai-deadlines.ts). */
  streamIdleMs: number;
  streamTotalMs: number;
}

export interface Resolved {
  file: string;
  fileExists: boolean;
  profile?: string;
  values: Effective;
  sources: Record<SettingKey, Source>;
  /** A word on a value whose source alone would mislead (a window found in `contextWindows`, a sandbox mode that `off` ignores). */
  notes: Partial<Record<SettingKey, string>>;
  /** The window came from `contextWindows[model]`, not from a `contextWindow` setting. */
  windowFromMap: boolean;
}

export const DEFAULTS = {
  baseUrl: DEFAULT_BASE_URL,
  approval: 'ask',
  allow: [] as readonly string[],
  sandbox: 'bwrap',
  sandboxMode: 'workspace-write',
  allowNetwork: false,
  allowGitWrites: false,
  maxSteps: 100,
  streamIdleMs: DEFAULT_STREAM_LIMITS.idleMs,
  streamTotalMs: DEFAULT_STREAM_LIMITS.totalMs,
} as const;

/** Contract: throws `UsageError` for a bad flag, a bad environment value, or a profile the file does not define; pure otherwise. */
export function resolveConfig(flags: ConfigFlags, loaded: LoadedConfig, env: NodeJS.ProcessEnv = process.env): Resolved {
  const layers: [Source, Settings][] = [
    ['flag', flagLayer(flags)],
    ['env', envLayer(env)],
    ['profile', profileLayer(flags.profile, loaded)],
    ['file', fileLayer(loaded)],
  ];
  const sources = {} as Record<SettingKey, Source>;
  const notes: Resolved['notes'] = {};
  const pick = <K extends SettingKey>(key: K, fallback: NonNullable<Settings[K]> | undefined): Settings[K] => {
    for (const [source, layer] of layers) {
      if (layer[key] !== undefined) {
        sources[key] = source;
        return layer[key];
      }
    }
    sources[key] = 'default';
    return fallback;
  };

  const model = pick('model', undefined);
  const sandbox = pick('sandbox', DEFAULTS.sandbox)!;
  let sandboxMode = pick('sandboxMode', DEFAULTS.sandboxMode)!;
  if (sandbox === 'off' && sources.sandboxMode === 'flag') {
    throw new UsageError(`--sandbox-mode needs the bwrap sandbox, but sandbox is off (from ${describeSource(sources.sandbox, loaded, flags.profile)})`);
  }
  if (sandbox === 'off' && sources.sandboxMode !== 'default') notes.sandboxMode = 'ignored: sandbox is off';
  if (sandbox === 'off') sandboxMode = DEFAULTS.sandboxMode;

  // The per-model map merges; the window itself: contextWindow if any layer sets it, else the map's entry for the model, else the built-in table.
  const fileMap = loaded.config.contextWindows ?? {};
  const profileMap = (flags.profile ? loaded.config.profiles?.[flags.profile]?.contextWindows : undefined) ?? {};
  const contextWindows = { ...fileMap, ...profileMap };
  sources.contextWindows = Object.keys(profileMap).length ? 'profile' : Object.keys(fileMap).length ? 'file' : 'default';
  let contextWindow = pick('contextWindow', undefined);
  const mapped = model !== undefined && Object.hasOwn(contextWindows, model) ? contextWindows[model] : undefined;
  const windowFromMap = contextWindow === undefined && mapped !== undefined;
  if (windowFromMap) {
    contextWindow = mapped;
    sources.contextWindow = Object.hasOwn(profileMap, model!) ? 'profile' : 'file';
    notes.contextWindow = `from contextWindows[${JSON.stringify(model)}]`;
  } else if (contextWindow === undefined && model !== undefined) {
    contextWindow = knownContextWindow(model);
    notes.contextWindow = contextWindow === undefined ? `unknown for ${model}: compaction waits for an overflow to learn it` : `known for ${model}`;
  } else if (contextWindow === undefined) notes.contextWindow = 'no model chosen';

  const values: Effective = {
    model,
    baseUrl: pick('baseUrl', DEFAULTS.baseUrl)!,
    approval: pick('approval', DEFAULTS.approval)!,
    allow: pick('allow', [...DEFAULTS.allow])!,
    sandbox,
    sandboxMode,
    allowNetwork: pick('allowNetwork', DEFAULTS.allowNetwork)!,
    allowGitWrites: pick('allowGitWrites', DEFAULTS.allowGitWrites)!,
    sandboxLimits: resolveSandboxLimits(pick('sandboxLimits', undefined)),
    maxSteps: pick('maxSteps', DEFAULTS.maxSteps)!,
    contextWindow,
    contextWindows,
    streamIdleMs: pick('streamIdleMs', DEFAULTS.streamIdleMs)!,
    streamTotalMs: pick('streamTotalMs', DEFAULTS.streamTotalMs)!,
  };
  return { file: loaded.path, fileExists: loaded.exists, profile: flags.profile, values, sources, notes, windowFromMap };
}

export function describeSource(source: Source, loaded: Pick<LoadedConfig, 'path'>, profile?: string): string {
  if (source === 'flag') return 'a flag';
  if (source === 'env') return 'the environment';
  if (source === 'profile') return `profile ${profile} in ${loaded.path}`;
  if (source === 'file') return loaded.path;
  return 'the default';
}
