/**
 * Runs one delegation: the subagent machine with its actors provided from
 * the registry (the pre-check), the chosen provider (the child), and the
 * parent session (the brackets in its log). The parent's abort signal is the
 * machine's cancel; a spent tree budget is too, naming why. Whatever happens,
 * the promise settles with a result — a child that crashes or vanishes is a
 * failed result with a named code, never a hang — and the child is closed
 * afterwards (the parent session's close waits for that).
 */
import { createActor, fromPromise } from 'xstate';
import { finalText } from '../log/completed-turns.js';
import { childTraceparent } from '../log/trace.js';
import { subagentMachine } from '../machines/subagent.machine.js';
import type { ChildReport, SubagentInput, SubagentResult } from '../machines/subagent-result.js';
import type { BudgetLimit } from '../log/entries-budget.js';
import type { SessionControl } from '../ports/session.js';
import type { ChildModel, ChildSession, SubagentProvider, Subagents } from '../ports/subagents.js';
import type { ToolDefinition } from '../ports/tools.js';
import { faultInspected } from '../runtime/fault-injection.js';
import { remainingOf, sessionBudget, spendOfLog } from '../runtime/subagents/budget.js';
import { SubagentCode } from '../log/codes.js';

/** Reports longer than this reach the parent cut, with a note naming the child's log. */
export const REPORT_LIMIT = 16_000;

export interface DelegationDeps {
  parent: SessionControl;
  registry: Subagents;
  /** The tools the parent's product offers (what an in-process child could be offered). */
  offered: () => readonly string[];
}

export interface Delegation {
  callId: string;
  child: string;
  provider: string;
  task: string;
  tools?: readonly string[];
  scoped?: readonly ToolDefinition[];
  signal: AbortSignal;
  /** The model the delegating tool's row names for its children (ADR 0066); absent: the provider's, else the parent's. */
  model?: ChildModel;
  /** What the child's turn ended on, to report; default: the text of its last assistant message. */
  report?: (child: ChildSession, from: number) => string;
}

const TURN_START = 'turn/start';

/** The child's spans hang under the call that started it, live and after the fact (ADR 0055). */
/** What is left of the parent's own cap now, for a provider whose child cannot fold it from the parent (ADR 0077). */
function budgetLeft(parent: SessionControl): { budget?: BudgetLimit } {
  const own = sessionBudget(parent.entries());
  return own.limit ? { budget: remainingOf(own.limit, own.used) } : {};
}

function traceparentFor(parent: SessionControl, callId: string): { traceparent?: string } {
  const t = childTraceparent(parent.entries(), callId);
  return t ? { traceparent: t } : {};
}

/** Contract: never rejects; resolves with the machine's result once it is final. */
export function runDelegation(deps: DelegationDeps, d: Delegation): Promise<SubagentResult> {
  const { parent, registry } = deps;
  let chosen: SubagentProvider | undefined;
  let child: ChildSession | undefined;
  const input: SubagentInput = { callId: d.callId, child: d.child, provider: d.provider, depth: parent.depth + 1, task: d.task, ...(d.tools ? { tools: d.tools } : {}), reportLimit: REPORT_LIMIT };
  const machine = subagentMachine.provide({
    actions: { record: (_, draft) => parent.record(draft) },
    actors: {
      admitRequest: fromPromise(async () => {
        const verdict = registry.admit({ provider: d.provider, depth: input.depth, ...(d.tools ? { tools: d.tools } : {}) }, deps.offered());
        if (!verdict.ok) return verdict;
        chosen = verdict.provider;
        return { ok: true as const };
      }),
      openChild: fromPromise(async ({ signal }) => {
        const opened = await chosen!.open({ id: d.child, depth: input.depth, parent: parent.id, ...(d.tools ? { tools: d.tools } : {}), ...(d.scoped ? { scoped: d.scoped } : {}), parentEntries: () => parent.entries(), signal, ...traceparentFor(parent, d.callId), ...(d.model !== undefined ? { model: d.model } : {}), ...budgetLeft(parent) });
        // Created after the parent stopped waiting: nobody will run it.
        if (signal.aborted) {
          registry.track(opened.close());
          throw new Error('cancelled while the child was being created');
        }
        child = opened;
        const start = opened.entries().find((e) => e.kind === 'session/start');
        return { location: opened.location, ...(start?.kind === 'session/start' ? { model: start.model } : {}) };
      }),
      runChild: fromPromise(async ({ signal }): Promise<ChildReport> => {
        const c = child!;
        // Its bracket is durable before any of its turn is (issue #26): a store that keeps appends in memory until a
        // flush (Postgres) would otherwise lose a killed parent's subagent/start while the child's lines were committed,
        // and no repair of the parent would find the child to close it.
        try {
          await parent.flush?.();
        } catch (err) {
          throw new Error(`its subagent/start could not be made durable in the parent's log, so it was not run: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
        }
        // Cancelled while the bracket was flushed: the machine has left `running` (the bracket is closed, the cancel
        // sent to a child with no turn yet), so no turn may start that nobody would end. What this returns is unheard.
        if (signal.aborted) return { reason: 'aborted', report: '' };
        const from = c.entries().length;
        const out = await c.run(d.task);
        const entries = c.entries();
        const start = entries.findLastIndex((e) => e.kind === TURN_START);
        const report = d.report ? d.report(c, from) : finalText(entries, Math.max(start, 0));
        return { reason: out.reason, ...(out.code ? { code: out.code } : {}), ...(out.cause ? { cause: out.cause } : {}), report, usage: spendOfLog(entries) };
      }),
      cancelChild: fromPromise(async ({ input: i }) => {
        await child?.cancel(i.cause);
      }),
    },
  });
  return new Promise<SubagentResult>((resolve) => {
    const actor = createActor(machine, { input, inspect: faultInspected(undefined) });
    const cancel = (cause: string) => actor.send({ type: 'subagent.cancel.requested', cause });
    const onAbort = () => cancel('parent');
    const offBudget = registry.budget?.onExhausted(() => cancel(SubagentCode.TREE_BUDGET_EXHAUSTED));
    let settled = false;
    const finish = (r: SubagentResult) => {
      if (settled) return;
      settled = true;
      d.signal.removeEventListener('abort', onAbort);
      offBudget?.();
      // The child is closed after the result is in; a cancel that is still reaching it is waited for by the parent's close.
      const c = child;
      if (c) registry.track(c.close());
      resolve(r);
    };
    actor.subscribe({
      complete: () => finish(actor.getSnapshot().output!),
      error: (err) => finish({ status: 'error', code: SubagentCode.SUBAGENT_FAILED, content: `The delegation failed: ${err instanceof Error ? err.message : String(err)}`, child: d.child, started: child !== undefined }),
    });
    actor.start();
    if (d.signal.aborted) onAbort();
    else d.signal.addEventListener('abort', onAbort, { once: true });
    // A cancel reaching the child outlives this promise when the parent stopped waiting: the close waits for it.
    registry.track(new Promise<void>((done) => actor.subscribe({ complete: () => done(), error: () => done() })));
  });
}
