/**
 * Asking the answerer, safely: whatever the answerer does — nothing mounted,
 * a throw, a hang, an answer outside the closed set — the result is one of
 * the closed outcomes, and anything but an allow denies (I6).
 */
import { ApprovalOutcome } from '../log/entries-calls.js';
import type { ApprovalAnswer } from '../ports/approval.js';
import { checkRule } from '../safety/approval-rules.js';
import type { AnswerRequest, Answerer } from '../ports/approval.js';

export interface AskOptions {
  answerer?: Answerer;
  /** Give up (`unavailable`) after this long; unset waits as long as the call is not cancelled. */
  timeoutMs?: number;
}

const describe = (err: unknown) => (err instanceof Error ? err.message : String(err));

function normalize(answer: unknown, request: Omit<AnswerRequest, 'signal'>): ApprovalAnswer {
  const a = answer as Partial<ApprovalAnswer> | null | undefined;
  const outcome = ApprovalOutcome.safeParse(a?.outcome);
  if (!outcome.success) return { outcome: 'unavailable', by: `invalid answer: ${JSON.stringify(answer) ?? 'undefined'}` };
  const by = typeof a?.by === 'string' && a.by !== '' ? a.by : 'answerer';
  // A form's values, kept as given: the question's own check (actors/tool-question.ts) reads them against its fields.
  const values = request.form && a?.values && typeof a.values === 'object' && !Array.isArray(a.values) ? { values: a.values } : {};
  if (request.form) return { outcome: outcome.data, by, ...values };
  if (outcome.data !== 'allowed-always') return { outcome: outcome.data, by };
  let rule = request.always;
  if (a?.rule !== undefined) {
    try {
      rule = checkRule(a.rule);
    } catch (err) {
      return { outcome: 'unavailable', by: `invalid answer: ${describe(err)}` };
    }
    // An answer cannot widen approval to another tool than the one it was asked about.
    if (rule.tool !== request.name) return { outcome: 'unavailable', by: `invalid answer: rule for ${rule.tool}, asked about ${request.name}` };
  }
  return { outcome: 'allowed-always', by, rule };
}

/**
 * Contract: never rejects; resolves with an answer in the closed outcome set.
 * No answerer, a throw or an invalid answer give `unavailable`; the timeout
 * gives `unavailable` and aborts the answerer's signal; an abort of `signal`
 * gives `cancelled`.
 */
export async function askApproval(o: AskOptions, request: Omit<AnswerRequest, 'signal'>, signal: AbortSignal): Promise<ApprovalAnswer> {
  if (!o.answerer) return { outcome: 'unavailable', by: 'no answerer' };
  if (signal.aborted) return { outcome: 'cancelled', by: 'cancel' };
  const stop = new AbortController();
  const answerSignal = AbortSignal.any([signal, stop.signal]);
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onAbort: (() => void) | undefined;
  const interrupted = new Promise<ApprovalAnswer>((resolve) => {
    onAbort = () => resolve({ outcome: 'cancelled', by: 'cancel' });
    signal.addEventListener('abort', onAbort, { once: true });
    if (o.timeoutMs !== undefined) {
      timer = setTimeout(() => resolve({ outcome: 'unavailable', by: `no answer within ${o.timeoutMs} ms` }), Math.min(o.timeoutMs, 2 ** 31 - 1));
    }
  });
  let answered: Promise<ApprovalAnswer>;
  try {
    answered = Promise.resolve(o.answerer({ ...request, signal: answerSignal })).then(
      (a) => normalize(a, request),
      (err: unknown) => ({ outcome: 'unavailable' as const, by: `answerer failed: ${describe(err)}` }),
    );
  } catch (err) {
    answered = Promise.resolve({ outcome: 'unavailable', by: `answerer failed: ${describe(err)}` });
  }
  try {
    return await Promise.race([answered, interrupted]);
  } finally {
    clearTimeout(timer);
    if (onAbort) signal.removeEventListener('abort', onAbort);
    stop.abort();
  }
}
