/**
 * The `base` bundle: today's product as id-tagged rows. Every other layer
 * (a profile, `$BRIDLE_HOME/config.yaml`'s `patch:`, a `--patch` file, the
 * flags) changes it by row id; `bridle config --dump` prints the result.
 * A row's defaults live in one place, its provider's config schema; the dump
 * prints each row's config with them filled in.
 */
import type { Row } from '../plugins/rows.js';

export interface Bundle {
  name: string;
  rows: readonly Row[];
}

export const base: Bundle = {
  name: 'base',
  rows: [
    { id: 'tools', use: 'registry' },
    { id: 'hooks', use: 'registry' },
    { id: 'prompt', use: 'registry' },
    { id: 'clock', use: 'system' },
    { id: 'ids', use: 'random' },
    { id: 'model', use: 'openai-chat' },
    { id: 'store', use: 'jsonl' },
    { id: 'sandbox', use: 'bwrap' },
    { id: 'fs', use: 'local' },
    { id: 'subprocess', use: 'local' },
    { id: 'approval', use: 'policy' },
    { id: 'turn', use: 'limits' },
    // The agent loop: the session, turn and step machines, as bridle provides them (ADR 0077).
    { id: 'loop:agent', use: 'machines' },
    { id: 'prices', use: 'table' },
    { id: 'compaction', use: 'compaction' },
    { id: 'recovery:retry', use: 'retry' },
    { id: 'recovery:overflow', use: 'overflow' },
    { id: 'prompt:core', use: 'core' },
    { id: 'prompt:tools', use: 'tools' },
    { id: 'prompt:workspace', use: 'workspace' },
    { id: 'prompt:nested', use: 'nested' },
    { id: 'guard:repeat-call', use: 'repeat-call' },
    { id: 'guard:read-only-mode', use: 'read-only-mode' },
    { id: 'tool:read_file', use: 'read_file' },
    { id: 'tool:write_file', use: 'write_file' },
    { id: 'tool:edit_file', use: 'edit_file' },
    { id: 'tool:list_dir', use: 'list_dir' },
    { id: 'tool:glob', use: 'glob' },
    { id: 'tool:grep', use: 'grep' },
    { id: 'tool:bash', use: 'bash' },
    { id: 'subagents', use: 'registry' },
    { id: 'subagent:spawn', use: 'spawn' },
    { id: 'subagent:fork', use: 'fork' },
    { id: 'workflow', use: 'worker' },
    { id: 'tool:delegate', use: 'delegate' },
    { id: 'tool:workflow', use: 'workflow' },
    // After the tools: the `skill` tool it offers (only when there are skills) comes last.
    { id: 'prompt:skills', use: 'skills' },
  ],
};

/** The bundles a profile may list, by name. */
export const BUNDLES: ReadonlyMap<string, Bundle> = new Map([[base.name, base]]);
