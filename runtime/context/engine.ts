/**
 * Context engineering for one session, in one place: the prompt registry and
 * the header it yields, the token meter, and the compaction actors. The
 * session wires the result into its machines.
 */
import type { ToolSpec } from '../../log/entry-values.js';
import type { Recorder } from '../../log/recorder.js';
import { compactionActors, pressureGuard } from '../../actors/compaction.js';
import { ContextMeter } from './meter.js';
import { knownContextWindow } from './windows.js';
import type { ContextSettings } from '../../ports/loop.js';
import type { ModelProvider } from '../../ports/model.js';
import { headerSource } from '../prompt/header.js';
import type { PromptRegistry } from '../prompt/registry.js';

export interface ContextEngineOptions {
  recorder: Recorder;
  id: string;
  cwd: string;
  modelName: string;
  depth: number;
  /** The system prompt's sections (the `prompt` service). */
  prompt: PromptRegistry;
  /** The tools' wire forms; the same array while they are unchanged. */
  tools: () => ToolSpec[];
  model: ModelProvider;
  /** The `compaction` row's settings. */
  context: ContextSettings;
  /** Overrides the registry's prompt, byte for byte. */
  system?: string;
}

/** The window the meter plans for: the row's `window`, else its entry for this model, else the built-in table. */
export function contextWindowFor(c: ContextSettings, modelName: string): number | undefined {
  return c.window ?? (Object.hasOwn(c.windows, modelName) ? c.windows[modelName] : undefined) ?? knownContextWindow(modelName);
}

export function createContextEngine(o: ContextEngineOptions) {
  const prompt = o.prompt;
  const header = headerSource({
    registry: prompt,
    scope: o.depth > 0 ? 'subagent' : 'session',
    vars: () => ({ cwd: o.cwd, model: o.modelName, session: o.id, depth: String(o.depth), tools: o.tools().map((t) => t.name).join(', ') }),
    tools: o.tools,
    params: { model: o.modelName, ...(o.model.reasoning !== undefined ? { reasoning: o.model.reasoning } : {}) },
    recorder: o.recorder,
    ...(o.system !== undefined ? { system: o.system } : {}),
  });
  const window = contextWindowFor(o.context, o.modelName);
  const meter = new ContextMeter(o.recorder, header, { ...(window !== undefined ? { window } : {}), threshold: o.context.threshold });
  const settings = { ...(o.context.tailRatio !== undefined ? { tailRatio: o.context.tailRatio } : {}), ...(o.context.summaryMaxTokens !== undefined ? { summaryMaxTokens: o.context.summaryMaxTokens } : {}) };
  const actors = compactionActors({ recorder: o.recorder, meter, header, model: o.model, settings });
  return { prompt, header, meter, actors, isOverThreshold: pressureGuard(meter) };
}
