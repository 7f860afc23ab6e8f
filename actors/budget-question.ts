/**
 * The spent budget's question (ADR 0047): the turn machine's `isOverBudget` guard and `askBudget` actor. The
 * guard reads the session's budget as its own log leaves it (`sessionBudget`); the actor logs the figures
 * (`budget/asked`, flushed before anyone is asked, so a crash while it waits leaves the question open for resume
 * to ask again), then decides: under `never` nothing waits (rejected), a host that does not ask (`run`, a
 * library default) ends the turn (unavailable), and `chat`, `serve` and `acp` ask their answerer — an approval of
 * its own class, the tool name `budget`. Yes raises the cap by one more budget's worth from where the spending
 * stands (`budget/decided` carries the new cap); anything else ends the turn `BUDGET_EXHAUSTED` with the figures.
 */
import { fromPromise } from 'xstate';
import { budgetQuestionId } from '../log/ids.js';
import type { Recorder } from '../log/recorder.js';
import type { BudgetVerdict } from '../machines/turn.machine.js';
import type { Answerer, ApprovalPolicy } from '../ports/approval.js';
import { askApproval } from './ask-approval.js';
import { raisedLimit, sessionBudget } from '../runtime/subagents/budget.js';

export interface BudgetQuestionOptions {
  policy: ApprovalPolicy;
  /** The host asks its answerer when the budget is spent (chat, serve, acp); else the turn ends. */
  ask: boolean;
  answerer?: Answerer;
  answerTimeoutMs?: number;
}

/** Contract: appends nothing until the actor runs; the guard never throws. */
export function budgetQuestion(recorder: Recorder, o: BudgetQuestionOptions) {
  const budget = sessionBudget(recorder.entries);
  recorder.onEntry((e) => budget.add(e));
  const isOverBudget = () => budget.spent() !== undefined;
  const askBudget = fromPromise<BudgetVerdict, { turn: string }>(async ({ input, signal }) => {
    const why = budget.spent() ?? 'the budget is spent';
    const used = { ...budget.used };
    const limit = { ...budget.limit };
    recorder.append({ kind: 'budget/asked', turn: input.turn, used, limit });
    await recorder.flush();
    let outcome: 'allowed-once' | 'rejected' | 'unavailable';
    let by: string;
    if (o.policy === 'never') [outcome, by] = ['rejected', 'approval policy never'];
    else if (!o.ask) [outcome, by] = ['unavailable', 'not asked: this host ends the turn'];
    else {
      const n = recorder.entries.filter((e) => e.kind === 'budget/asked' && e.turn === input.turn).length;
      const figures = JSON.stringify({ used, limit });
      const reason = `the budget is spent (${why}); allow one more budget's worth?`;
      const request = { callId: budgetQuestionId(input.turn, n), name: 'budget', arguments: figures, reason, presented: `budget: ${why}`, always: { tool: 'budget', pattern: '' } };
      const a = await askApproval({ answerer: o.answerer, ...(o.answerTimeoutMs !== undefined ? { timeoutMs: o.answerTimeoutMs } : {}) }, request, signal);
      // A cancel of the turn: the machine has left the question, and the log keeps it unanswered.
      if (a.outcome === 'cancelled' || signal.aborted) return { go: false, cause: 'cancelled' };
      outcome = a.outcome === 'allowed-once' || a.outcome === 'allowed-always' ? 'allowed-once' : a.outcome === 'rejected' ? 'rejected' : 'unavailable';
      by = a.by;
    }
    if (outcome === 'allowed-once') {
      recorder.append({ kind: 'budget/decided', turn: input.turn, outcome, by, limit: raisedLimit(budget.config ?? limit, used) });
      return { go: true };
    }
    recorder.append({ kind: 'budget/decided', turn: input.turn, outcome, by });
    return { go: false, cause: why };
  });
  return { isOverBudget, askBudget };
}
