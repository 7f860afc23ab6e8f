/**
 * The request header a session sends: the assembled system prompt, the tool
 * schemas, the model params. Assembly runs again only when the registry
 * changed or a new turn began (AGENTS.md is re-read per turn); the same
 * object comes back while nothing changed, so callers may compare by identity.
 */
import type { ToolSpec } from '../../log/entries.js';
import type { Recorder } from '../../log/recorder.js';
import type { HeaderParts } from '../prepare-request.js';
import type { PromptVars } from './interpolate.js';
import type { PromptRegistry, PromptScope } from './registry.js';

export interface HeaderSourceOptions {
  registry: PromptRegistry;
  scope: PromptScope;
  vars: PromptVars;
  tools: ToolSpec[];
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
    const key = o.system !== undefined ? 'fixed' : `${o.registry.version}:${generation}`;
    if (cache?.key === key) return cache.h;
    const system = o.system ?? o.registry.assemble(o.scope, o.vars);
    cache = { key, h: cache?.h.system === system ? cache.h : { system, tools: o.tools, params: o.params } };
    return cache.h;
  };
}
