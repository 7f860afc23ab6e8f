/** The safety flags every session command shares: `--sandbox`, `--sandbox-mode`, `--allow`, `--allow-network`, `--allow-git-writes`, `--override-policy`, `--move-workspace`. */
import type { Command } from 'commander';

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
    .option('--no-allow-git-writes', 'keep the workspace .git read-only (default)')
    .option('--override-policy', 'let a continued session widen its logged policy')
    .option('--move-workspace', 'let a continued session move to another --cwd');
}
