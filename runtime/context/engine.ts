/**
 * Context engineering for one session, in one place: the prompt registry and
 * the header it yields, the token meter, and the compaction actors. The
 * session wires the result into its machines.
 */
import type { ToolSpec } from '../../log/entries.js';
import type { Recorder } from '../../log/recorder.js';
import { compactionActors, pressureGuard, type CompactionSettings } from './compaction.js';
import { ContextMeter } from './meter.js';
import { DEFAULT_COMPACT_THRESHOLD, knownContextWindow } from './windows.js';
import type { ModelProvider } from '../../ports/model.js';
import { readAgentsFiles, type AgentsFile } from '../prompt/agents-files.js';
import { defaultPromptRegistry } from '../prompt/builtin.js';
import { headerSource } from '../prompt/header.js';
import type { PromptRegistry } from '../prompt/registry.js';

export interface ContextOptions {
  /** The model's context window in tokens (default: known for some models, else unknown). */
  contextWindow?: number;
  /** Compaction is due when the next request reaches this share of the window (default 0.8). */
  compactThreshold?: number;
  compaction?: CompactionSettings;
  /** The system prompt's sections; default: the built-in core, tools and workspace sections. */
  prompt?: PromptRegistry;
  /** Where AGENTS.md files come from (default: read from disk, project root down to `cwd`, once per turn). */
  agentsFiles?: () => readonly AgentsFile[];
}

export function createContextEngine(o: ContextOptions & {
  recorder: Recorder;
  id: string;
  cwd: string;
  /** AGENTS.md files leading into it are not read. */
  bridleHome?: string;
  modelName: string;
  depth: number;
  tools: ToolSpec[];
  model: ModelProvider;
  /** Overrides the registry's prompt, byte for byte. */
  system?: string;
  core: string;
}) {
  const prompt = o.prompt ?? defaultPromptRegistry({ tools: o.tools, agentsFiles: o.agentsFiles ?? (() => readAgentsFiles(o.cwd, undefined, o.bridleHome)), core: o.core });
  const header = headerSource({
    registry: prompt,
    scope: o.depth > 0 ? 'subagent' : 'session',
    vars: { cwd: o.cwd, model: o.modelName, session: o.id, depth: String(o.depth), tools: o.tools.map((t) => t.name).join(', ') },
    tools: o.tools,
    params: { model: o.modelName },
    recorder: o.recorder,
    ...(o.system !== undefined ? { system: o.system } : {}),
  });
  const window = o.contextWindow ?? knownContextWindow(o.modelName);
  const meter = new ContextMeter(o.recorder, header, { ...(window !== undefined ? { window } : {}), threshold: o.compactThreshold ?? DEFAULT_COMPACT_THRESHOLD });
  const actors = compactionActors({ recorder: o.recorder, meter, header, model: o.model, ...(o.compaction ? { settings: o.compaction } : {}) });
  return { prompt, header, meter, actors, isOverThreshold: pressureGuard(meter) };
}
