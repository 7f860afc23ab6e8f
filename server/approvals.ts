/**
 * The `ws` approval provider: an `Answerer` that asks every attached client
 * and takes the first valid answer. The tool-call machine logs the question
 * (`approval/asked`) and the decision (`approval/decided`); this desk only
 * carries them over the wire. A tool's question (ADR 0065) goes out with
 * its form and comes back with the values filled in.
 */
import type { Answerer } from '../ports/approval.js';
import type { ApprovalAnswer } from '../ports/approval.js';
import type { ApprovalRequest } from './protocol.js';
import { changeOf } from '../tools/diff.js';

export interface DeskHooks {
  /** Runs before a question goes out: the server flushes, so `approval/asked` reaches clients first. */
  beforeAsk(): Promise<void>;
  /** Sends the question to the attached clients. */
  announce(request: ApprovalRequest): void;
}

/** A call's arguments as an `approval/request` carries them: parsed, or the raw text when it is not JSON. */
export const parseArgs = (raw: string): unknown => {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
};

export class ApprovalDesk {
  private readonly pending = new Map<string, { request: ApprovalRequest; settle: (a: ApprovalAnswer) => void }>();

  constructor(
    private readonly sessionId: () => string,
    private readonly hooks: DeskHooks,
  ) {}

  /**
   * Contract: resolves with the first `respond` for the call, or `cancelled`
   * when the call's signal aborts (a cancel, or the server stopping — then the
   * machine is gone and nothing is logged, so the question stays open in the
   * log for resume to ask again).
   */
  readonly answerer: Answerer = async ({ callId, name, arguments: raw, reason, presented, form, signal }) => {
    await this.hooks.beforeAsk().catch(() => undefined);
    if (signal.aborted) return { outcome: 'cancelled', by: 'cancel' };
    return new Promise<ApprovalAnswer>((resolve) => {
      const args = parseArgs(raw);
      const change = changeOf(name, args);
      const request: ApprovalRequest = { sessionId: this.sessionId(), callId, tool: name, args, reason, presented, ...(change ? { change } : {}), ...(form ? { form: { fields: [...form.fields] } } : {}) };
      const onAbort = () => {
        if (this.pending.delete(callId)) resolve({ outcome: 'cancelled', by: 'cancel' });
      };
      this.pending.set(callId, {
        request,
        settle: (a) => {
          signal.removeEventListener('abort', onAbort);
          resolve(a);
        },
      });
      signal.addEventListener('abort', onAbort, { once: true });
      this.hooks.announce(request);
    });
  };

  /** The first answer wins; returns false when the call is not waiting (answered, cancelled, unknown). `values`: a question's form, filled in. */
  respond(callId: string, outcome: 'allowed-once' | 'rejected', by: string, values?: Record<string, string | number | boolean>): boolean {
    const p = this.pending.get(callId);
    if (!p) return false;
    this.pending.delete(callId);
    p.settle({ outcome, by, ...(values ? { values } : {}) });
    return true;
  }

  /** Questions still open, oldest first: a client that attaches late is asked too. */
  open(): ApprovalRequest[] {
    return [...this.pending.values()].map((p) => p.request);
  }
}
