/** The layers the effective configuration is picked from, each as the settings it sets (undefined: not set there). */
import { UsageError } from '../errors.js';
import { parseApproval, parseContextWindow, parseMaxSteps, parseStreamMs } from '../run.js';
import { parseSafetyFlags } from '../safety-flags.js';
import type { LoadedConfig } from './load.js';
import type { ConfigFlags } from './resolve.js';
import type { Settings } from './schema.js';

/** Flags are checked by the same parsers the commands use, so their errors read the same. */
export function flagLayer(f: ConfigFlags): Settings {
  const safety = parseSafetyFlags({ sandbox: f.sandbox, sandboxMode: f.sandboxMode, allow: f.allow, allowNetwork: f.allowNetwork, allowGitWrites: f.allowGitWrites });
  return {
    model: f.model,
    baseUrl: f.baseUrl,
    approval: parseApproval(f.approval),
    allow: f.allow,
    sandbox: f.sandbox === undefined ? undefined : safety.sandbox,
    sandboxMode: f.sandboxMode === undefined ? undefined : safety.sandboxMode,
    allowNetwork: f.allowNetwork,
    allowGitWrites: f.allowGitWrites,
    maxSteps: parseMaxSteps(f.maxSteps),
    contextWindow: parseContextWindow(f.contextWindow),
    streamIdleMs: parseStreamMs('--stream-idle-ms', f.streamIdleMs),
    streamTotalMs: parseStreamMs('--stream-total-ms', f.streamTotalMs),
  };
}

export function envLayer(env: NodeJS.ProcessEnv): Settings {
  // An empty variable counts as unset, as a shell user would expect of `FOO= bridle …`.
  const baseUrl = env.OPENAI_BASE_URL || undefined;
  if (baseUrl !== undefined) {
    try {
      new URL(baseUrl);
    } catch {
      throw new UsageError(`OPENAI_BASE_URL: not a URL: ${baseUrl}`);
    }
  }
  return { model: env.BRIDLE_MODEL || undefined, baseUrl };
}

export function profileLayer(name: string | undefined, loaded: LoadedConfig): Settings {
  if (name === undefined) return {};
  const profiles = loaded.config.profiles ?? {};
  const p = Object.hasOwn(profiles, name) ? profiles[name] : undefined;
  if (p) return p;
  const known = Object.keys(profiles);
  const where = loaded.exists ? loaded.path : `${loaded.path} (there is no such file)`;
  throw new UsageError(`--profile ${name}: no such profile in ${where}${known.length ? `; profiles: ${known.join(', ')}` : ''}`);
}

export function fileLayer(loaded: LoadedConfig): Settings {
  const { profiles: _profiles, ...settings } = loaded.config;
  return settings;
}
