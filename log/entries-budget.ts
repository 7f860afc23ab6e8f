/**
 * The budget's entries and values (ADR 0047): the spending cap a session and
 * its subagent tree run under, the prices it is counted at, and the question
 * a spent budget asks. Everything the check reads is here or in the usage of
 * `assistant/message`, so replay decides it from the log alone (I12).
 */
import { z } from 'zod';
import { envelope, TurnId } from './entry-values.js';

/** US dollars per million tokens of one model; cached input and cache writes priced as input when unset. */
export const Price = z.strictObject({ input: z.number().nonnegative(), cachedInput: z.number().nonnegative().optional(), cacheWrite: z.number().nonnegative().optional(), output: z.number().nonnegative() });
export type Price = z.infer<typeof Price>;
/** Prices per model id; `asOf`: the day they were read off the providers' pages. */
export const PriceTable = z.strictObject({ asOf: z.string().min(1), models: z.record(z.string().min(1), Price) });
export type PriceTable = z.infer<typeof PriceTable>;

/**
 * A cap: tokens (input + output, as the provider reported them) and/or US dollars; either part may be absent.
 * A child's cap is what its parent had left, so 0 is a cap (spent before its first call).
 */
export const BudgetLimit = z.strictObject({ tokens: z.int().nonnegative().optional(), usd: z.number().nonnegative().optional() });
export type BudgetLimit = z.infer<typeof BudgetLimit>;

/** What a session (with its tree) has spent: tokens, and dollars at the logged prices (a scripted model costs 0). */
export const Spend = z.strictObject({ tokens: z.int().nonnegative(), usd: z.number().nonnegative() });
export type Spend = z.infer<typeof Spend>;

/**
 * The budget `session/start` records in its `config`: the cap, and — when it has a dollar part — the price table
 * it is counted at, copied whole, so a config file changed later neither moves the cap nor breaks replay.
 */
export const BudgetConfig = z.strictObject({ ...BudgetLimit.shape, prices: PriceTable.optional() });
export type BudgetConfig = z.infer<typeof BudgetConfig>;

/** The budget is spent before a model call: the figures, logged (and flushed) before anyone is asked. */
export const BudgetAsked = z.strictObject({
  ...envelope,
  kind: z.literal('budget/asked'),
  turn: TurnId,
  used: Spend,
  limit: BudgetLimit,
});

/**
 * The answer: `allowed-once` raises the cap to `limit` (the call is made), `rejected` (a person said no, or the
 * `never` policy) and `unavailable` (nobody to ask: `run`, a subagent) end the turn `BUDGET_EXHAUSTED`.
 */
export const BudgetDecided = z.strictObject({
  ...envelope,
  kind: z.literal('budget/decided'),
  turn: TurnId,
  outcome: z.enum(['allowed-once', 'rejected', 'unavailable']),
  by: z.string(),
  /** With `allowed-once`: the raised cap, in force from here on. */
  limit: BudgetLimit.optional(),
});
