/**
 * Stage 2 of compaction, the choice: which units a summary replaces and which
 * messages the summary request replays. The current input is pinned; a
 * recent tail is kept; the summarized units are one contiguous run, so the
 * summary cites one seq span. The request replays the projection as it
 * stands (a byte-for-byte extension of the previous request, which a
 * provider's prompt cache can reuse) when that fits the window, else only the
 * prefix up to the run's end, shortened until it fits.
 */
import type { ToolSpec } from '../entry-values.js';
import type { ModelMessage } from '../messages.js';
import { summaryMessage, type SummaryScope } from './summary-prompt.js';
import { headerChars, messageChars, tokensOfChars } from './tokens.js';
import { isSummaryOnly, type Unit } from './units.js';

export interface SummaryPlanInput {
  units: readonly Unit[];
  header: { system: string; tools: readonly ToolSpec[] };
  window: number;
  /** The running turn: its user input stays whole. */
  currentTurn?: string;
  /** The recent tail kept verbatim, in tokens (at least the newest unit is kept). */
  tailTokens: number;
  /** Room left for the summary itself. */
  summaryMaxTokens: number;
  /** The share of the window a summary request and its answer may fill together. Default 1. */
  fitRatio?: number;
}

export interface SummaryPlan {
  /** The seq span the summary replaces. */
  start: number;
  end: number;
  /** How many of the projection's messages the request replays, from the first. */
  prefix: number;
  /** The instruction message that follows them. */
  instruction: ModelMessage;
  /** Estimated tokens of the whole summary request. */
  tokens: number;
  /** Estimated tokens of the messages the summary replaces: a summary must come out shorter. */
  replacing: number;
}

/** A run smaller than this is not worth a model request: a summary would hardly be shorter. */
export const MIN_SUMMARIZED_TOKENS = 256;

/** The running turn's input (the user's words, a resume note, a steer) is never summarized. */
const INPUT_ORIGINS = new Set(['user', 'resume', 'steer']);
const isPinned = (u: Unit, turn: string | undefined): boolean =>
  turn !== undefined && u.items.some((i) => i.kind === 'user/message' && INPUT_ORIGINS.has(i.origin) && i.turn === turn);

/** Contract: pure; undefined when nothing worth summarizing fits. */
export function planSummary(p: SummaryPlanInput): SummaryPlan | undefined {
  const { units } = p;
  if (units.length < 2) return undefined;
  let tailStart = units.length - 1;
  let tail = tokensOfChars(units[tailStart]!.chars);
  while (tailStart > 0 && tail + tokensOfChars(units[tailStart - 1]!.chars) <= p.tailTokens) tail += tokensOfChars(units[--tailStart]!.chars);

  // Runs of summarizable units before the tail; the biggest wins (the oldest on a tie).
  let best: { from: number; to: number; chars: number } | undefined;
  for (let i = 0; i < tailStart; ) {
    if (isPinned(units[i]!, p.currentTurn)) {
      i++;
      continue;
    }
    let j = i;
    let chars = 0;
    while (j < tailStart && !isPinned(units[j]!, p.currentTurn)) chars += units[j++]!.chars;
    if (!best || chars > best.chars) best = { from: i, to: j - 1, chars };
    i = j;
  }
  if (!best || (best.from === best.to && isSummaryOnly(units[best.from]!)) || tokensOfChars(best.chars) < MIN_SUMMARIZED_TOKENS) return undefined;

  const budget = Math.floor(p.window * (p.fitRatio ?? 1)) - p.summaryMaxTokens;
  const head = headerChars(p.header);
  const count = (from: number, to: number) => units.slice(from, to).reduce((n, u) => n + u.messages.length, 0);
  const charsOf = (from: number, to: number) => units.slice(from, to).reduce((n, u) => n + u.chars, 0);
  const build = (to: number, upTo: number): SummaryPlan | undefined => {
    const scope: SummaryScope = { before: count(0, best!.from), summarized: count(best!.from, to + 1), after: count(to + 1, upTo) };
    const instruction = summaryMessage(scope);
    const tokens = tokensOfChars(head + charsOf(0, upTo) + messageChars(instruction));
    const replacing = tokensOfChars(charsOf(best!.from, to + 1));
    if (tokens > budget || replacing < MIN_SUMMARIZED_TOKENS) return undefined;
    return { start: units[best!.from]!.start, end: units[to]!.end, prefix: count(0, upTo), instruction, tokens, replacing };
  };
  // The whole projection, for the cache; else the prefix up to the run's end, the run cut short until it fits.
  const whole = build(best.to, units.length);
  if (whole) return whole;
  for (let to = best.to; to >= best.from; to--) {
    if (to === best.from && isSummaryOnly(units[to]!)) break;
    const plan = build(to, to + 1);
    if (plan) return plan;
  }
  return undefined;
}
