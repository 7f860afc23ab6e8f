/**
 * What a hosted session's subagent tree has cost so far, for the hosts that
 * show it (the viewer's `session/cost`, ACP's `usage_update`): `bridle cost`'s
 * projection (`log/cost.ts`) of the session's entries and its subagents' logs.
 * The CLI supplies it: it knows the store the children are in and the prices row.
 */
import type { CostReport } from '../log/cost.js';
import type { Entry } from '../log/entries.js';

/** Contract: reads only; undefined when there is nothing to price with. */
export type UsageOf = (sessionId: string, entries: readonly Entry[]) => Promise<CostReport | undefined>;
