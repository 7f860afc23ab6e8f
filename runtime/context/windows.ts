/**
 * Context windows of well-known models, as defaults: `--context-window` (or
 * `SessionOptions.contextWindow`) wins. A model not listed has no known
 * window, so proactive compaction is off for it until an overflow tells the
 * meter where the limit lies (ADR 0005).
 */
const KNOWN: readonly [RegExp, number][] = [
  [/^gpt-4o/, 128_000],
  [/^gpt-4\.1/, 1_047_576],
  [/^gpt-5/, 400_000],
  [/^o[34]/, 200_000],
  [/^deepseek-(chat|reasoner)/, 128_000],
];

/** Contract: pure; undefined for a model it does not know. */
export function knownContextWindow(model: string): number | undefined {
  const bare = model.includes('/') ? model.slice(model.lastIndexOf('/') + 1) : model;
  return KNOWN.find(([re]) => re.test(bare))?.[1];
}

export const DEFAULT_COMPACT_THRESHOLD = 0.8;
/** The window compaction plans for when nothing better is known (a manual `/compact` on an unknown model). */
export const FALLBACK_CONTEXT_WINDOW = 128_000;
