/**
 * Hands the effective configuration to a command as the flags it already
 * parses, so `run`, `chat`, `resume` and `serve` honour the config file and
 * profiles without each learning about them.
 */
import { bridleHome } from '../home.js';
import type { SandboxLimits } from '../../safety/sandbox.js';
import { loadConfig } from './load.js';
import { resolveConfig, type ConfigFlags, type Resolved } from './resolve.js';

export interface ConfiguredFlags {
  /** Per-model windows from the config; `openSession` looks the session's model up in it when no `contextWindow` is set. */
  contextWindows?: Readonly<Record<string, number>>;
  /** The sandbox's limits, from the config or the defaults. */
  sandboxLimits?: SandboxLimits;
}

export interface ApplyOptions {
  env?: NodeJS.ProcessEnv;
  /** `resume`: a model from the config file or the default gives way to the one the session logged. */
  keepLoggedModel?: boolean;
}

/** Contract: throws `UsageError` (one line, exit 2) for a bad config file, flag, environment value or profile name. */
export function withConfig<F extends ConfigFlags>(flags: F, opts: ApplyOptions = {}): F & ConfiguredFlags {
  const env = opts.env ?? process.env;
  const r = resolveConfig(flags, loadConfig(bridleHome(env)), env);
  return { ...flags, ...asFlags(r, opts) };
}

/** Contract: pure; the resolved values in the commands' flag form. */
export function asFlags(r: Resolved, opts: Pick<ApplyOptions, 'keepLoggedModel'> = {}): ConfigFlags & ConfiguredFlags {
  const { values: v, sources: s } = r;
  const loggedModelWins = opts.keepLoggedModel && (s.model === 'file' || s.model === 'default');
  // A window found in `contextWindows` is left to `openSession`, which knows the model the session really uses (resume, serve).
  const explicitWindow = v.contextWindow !== undefined && s.contextWindow !== 'default' && !r.windowFromMap;
  return {
    model: loggedModelWins ? undefined : v.model,
    baseUrl: v.baseUrl,
    approval: v.approval,
    allow: v.allow,
    sandbox: v.sandbox,
    sandboxMode: v.sandbox === 'off' ? undefined : v.sandboxMode,
    allowNetwork: v.allowNetwork,
    allowGitWrites: v.allowGitWrites,
    sandboxLimits: v.sandboxLimits,
    maxSteps: String(v.maxSteps),
    contextWindow: explicitWindow ? String(v.contextWindow) : undefined,
    contextWindows: v.contextWindows,
    streamIdleMs: String(v.streamIdleMs),
    streamTotalMs: String(v.streamTotalMs),
  };
}
