/**
 * The request header a session sends: the assembled system prompt, the tool
 * schemas, the model params. Assembly runs again only when the registry
 * changed or a new turn began (AGENTS.md is re-read per turn); the same
 * object comes back while nothing changed, so callers may compare by identity.
 * Every section sees `{{now}}`: the current turn's `turn/start` time as
 * logged (the session's clock), the same for every step of the turn.
 */
import type { Entry } from '../../log/entries.js';
import type { ToolSpec } from '../../log/entry-values.js';
import type { Recorder } from '../../log/recorder.js';
import type { HeaderParts } from '../prepare-request.js';
import type { PromptVars } from '../../ports/prompt.js';
import type { PromptRegistry } from './registry.js';
import type { PromptScope } from '../../ports/prompt.js';

export interface HeaderSourceOptions {
  registry: PromptRegistry;
  scope: PromptScope;
  /** Computed afresh whenever the header is (the tools may have changed). */
  vars: () => PromptVars;
  /** Contract: returns the same array while the tools are unchanged, so the header can compare by identity. */
  tools: () => ToolSpec[];
  params: HeaderParts['params'];
  recorder: Recorder;
  /** A fixed system prompt that overrides the registry, byte for byte (replay passes the logged one). */
  system?: string;
}

/** Contract: the returned function throws `PromptVariableError` when a section refers to an unknown variable. */
export function headerSource(o: HeaderSourceOptions): () => HeaderParts {
  let generation = 0;
  o.recorder.onEntry((e) => {
    if (e.kind === 'turn/start') generation++;
  });
  let cache: { key: string; h: HeaderParts } | undefined;
  return () => {
    const tools = o.tools();
    const key = o.system !== undefined ? 'fixed' : `${o.registry.version}:${generation}`;
    if (cache?.key === key && cache.h.tools === tools) return cache.h;
    const system = o.system ?? o.registry.assemble(o.scope, { ...o.vars(), now: turnStartedAt(o.recorder.entries) });
    cache = { key, h: cache?.h.system === system && cache.h.tools === tools ? cache.h : { system, tools, params: o.params } };
    return cache.h;
  };
}

/** Contract: pure; the logged time the last turn began, '' before any turn. Read from the log, so a resumed or replayed session sees what was written. */
export function turnStartedAt(entries: readonly Entry[]): string {
  for (let i = entries.length - 1; i >= 0; i--) if (entries[i]!.kind === 'turn/start') return entries[i]!.at;
  return '';
}
