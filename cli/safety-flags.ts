/** The safety flags every session command shares: `--sandbox`, `--sandbox-mode`, `--allow`, `--allow-network`, `--allow-git-writes`. */
import type { Command } from 'commander';
import { parseRule } from '../safety/approval-rules.js';
import { resolveSandboxLimits, SANDBOX_MODES, type SandboxLimits, type SandboxMode } from '../safety/sandbox.js';
import type { ApprovalRule } from '../log/entries.js';
import { UsageError } from './errors.js';

export type SandboxKind = 'bwrap' | 'off';

export interface SafetyFlags {
  sandbox?: string;
  sandboxMode?: string;
  allow?: string[];
  allowNetwork?: boolean;
  allowGitWrites?: boolean;
  /** From the config file (`sandboxLimits`), not a flag. */
  sandboxLimits?: Partial<SandboxLimits>;
}

export interface SafetyChoice {
  sandbox: SandboxKind;
  sandboxMode: SandboxMode;
  allowNetwork: boolean;
  /** The workspace's `.git` writable by commands and the file tools (default: read-only). */
  allowGitWrites: boolean;
  sandboxLimits: SandboxLimits;
  rules: ApprovalRule[];
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** Adds the flags to a command (run, resume, serve). */
export function safetyOptions(cmd: Command): Command {
  return cmd
    .option('--sandbox <kind>', 'confine shell commands: bwrap (default) | off')
    .option('--sandbox-mode <mode>', 'read-only | workspace-write (default) | full')
    .option('--allow <tool:pattern>', 'run matching calls unasked (repeatable)', collect)
    .option('--allow-network', 'let sandboxed commands use the network')
    // Both forms: a flag must be able to undo `allowNetwork: true` from the config file.
    .option('--no-allow-network', 'keep sandboxed commands off the network (default)')
    .option('--allow-git-writes', 'let commands and file tools write .git')
    .option('--no-allow-git-writes', 'keep the workspace .git read-only (default)');
}

/** Contract: throws `UsageError` for an unknown value or a malformed rule. */
export function parseSafetyFlags(f: SafetyFlags): SafetyChoice {
  const sandbox = f.sandbox ?? 'bwrap';
  if (sandbox !== 'bwrap' && sandbox !== 'off') throw new UsageError(`--sandbox must be bwrap or off (got ${JSON.stringify(sandbox)})`);
  const mode = f.sandboxMode ?? 'workspace-write';
  if (!SANDBOX_MODES.includes(mode as SandboxMode)) throw new UsageError(`--sandbox-mode must be ${SANDBOX_MODES.join(', ')} (got ${JSON.stringify(mode)})`);
  if (sandbox === 'off' && f.sandboxMode !== undefined) throw new UsageError('--sandbox-mode needs --sandbox bwrap: with --sandbox off nothing is confined');
  const rules = (f.allow ?? []).map((text) => {
    try {
      return parseRule(text);
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
  });
  return {
    sandbox,
    sandboxMode: mode as SandboxMode,
    allowNetwork: f.allowNetwork === true,
    allowGitWrites: f.allowGitWrites === true,
    sandboxLimits: resolveSandboxLimits(f.sandboxLimits),
    rules,
  };
}
