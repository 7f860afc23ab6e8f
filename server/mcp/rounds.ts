/**
 * A `bridle_run` call that needs its caller's answer, across the call's
 * rounds (ADR 0075). MCP 2026-07-28 has no server-to-client request during a
 * call: the server answers `input_required` with the question, and the
 * client retries the call with the answer and the server's `requestState`
 * (the SDK's legacy shim plays the same rounds for a 2025 client, with a
 * real `elicitation/create`). The session cannot stop and wait in a result,
 * so it goes on running here, its approval parked, until the retry answers
 * it. A round's end is the run's end or its next question, whichever comes
 * first; a round's cancel cancels the run; a parked question nobody answers
 * within `waitMs` cancels the run too, so no session waits forever for a
 * caller that went away. Process memory only: a server that restarts has
 * lost its parked runs (their logs hold the open question, which the
 * pending-approval repair closes).
 */
import type { AnswerRequest, Answerer, ApprovalAnswer } from '../../ports/approval.js';

/** Where a parked question is: the run and the question's number in it, sealed into `requestState`. */
export interface RoundRef {
  run: string;
  seq: number;
}

export type AskedQuestion = Omit<AnswerRequest, 'signal'>;

export type RoundStep<R> = { kind: 'done'; result: R } | { kind: 'asking'; ref: RoundRef; question: AskedQuestion };

/** Why the rounds cancelled a run: said in the log as who cancelled. */
export class RoundCancel extends Error {
  override name = 'RoundCancel';
}

interface Parked {
  seq: number;
  question: AskedQuestion;
  settle(a: ApprovalAnswer): void;
}

interface Live<R> {
  id: string;
  abort: AbortController;
  result: Promise<R>;
  seq: number;
  /** Questions waiting, oldest first: the first is the one the caller is asked (two calls of a step may ask at once). */
  parked: Parked[];
  wake?: () => void;
  timer?: ReturnType<typeof setTimeout>;
  /** The current round's progress sink; a round that ended has none. */
  progress?: (message: string) => void;
}

export interface RoundsOptions {
  newId(): string;
  /** How long a parked question waits for the retry that answers it. */
  waitMs: number;
}

/** A run's side of the rounds: its answerer parks questions; its signal is the rounds'; its progress goes to the round in flight. */
export interface RoundHooks {
  answerer: Answerer;
  signal: AbortSignal;
  progress(message: string): void;
}

export class Rounds<R> {
  private readonly live = new Map<string, Live<R>>();

  constructor(private readonly o: RoundsOptions) {}

  /** Contract: resolves at the run's end or its first question; rejects as `start` does. */
  begin(start: (hooks: RoundHooks) => Promise<R>, signal: AbortSignal, progress?: (m: string) => void): Promise<RoundStep<R>> {
    const abort = new AbortController();
    const run: Live<R> = { id: this.o.newId(), abort, seq: 0, parked: [], result: undefined as unknown as Promise<R>, ...(progress ? { progress } : {}) };
    run.result = start({ answerer: (q) => this.park(run, q), signal: abort.signal, progress: (m) => run.progress?.(m) });
    return this.round(run, signal);
  }

  /**
   * Answers the question the caller was asked (`answer` maps the caller's response to bridle's answer), then
   * goes on as `begin` does. Contract: undefined when that question is not waiting (answered already, cancelled,
   * timed out, unknown): each question is answered once.
   */
  resume(ref: RoundRef, answer: (q: AskedQuestion) => ApprovalAnswer, signal: AbortSignal, progress?: (m: string) => void): Promise<RoundStep<R>> | undefined {
    const run = this.live.get(ref.run);
    const head = run?.parked[0];
    if (!run || !head || head.seq !== ref.seq || run.wake) return undefined;
    clearTimeout(run.timer);
    run.parked.shift();
    if (progress) run.progress = progress;
    head.settle(answer(head.question));
    return this.round(run, signal);
  }

  /** The run's end, for a run parked between rounds; undefined for one not parked (ADR 0083: a task waits on it beside its caller's answer). */
  ended(runId: string): Promise<R> | undefined {
    return this.live.get(runId)?.result;
  }

  /** Cancels a run parked between rounds (no round's signal is listening then); false when none is parked under that id. */
  cancel(runId: string, by: string): boolean {
    const run = this.live.get(runId);
    if (!run) return false;
    run.abort.abort(new RoundCancel(by));
    return true;
  }

  /** Runs waiting for an answer. */
  get size(): number {
    return this.live.size;
  }

  private park(run: Live<R>, request: AnswerRequest): Promise<ApprovalAnswer> {
    const { signal, ...question } = request;
    return new Promise((resolve) => {
      const seq = ++run.seq;
      const onAbort = () => {
        const i = run.parked.findIndex((p) => p.seq === seq);
        if (i < 0) return;
        run.parked.splice(i, 1);
        resolve({ outcome: 'cancelled', by: 'cancel' });
      };
      signal.addEventListener('abort', onAbort, { once: true });
      run.parked.push({ seq, question, settle: (a) => (signal.removeEventListener('abort', onAbort), resolve(a)) });
      run.wake?.();
    });
  }

  /** Resolves with the question to ask, or the run's end when it ends first. */
  private next(run: Live<R>): Promise<RoundStep<R>> {
    const done = run.result.then((result) => ({ kind: 'done' as const, result }));
    const asked = new Promise<void>((resolve) => (run.parked.length ? resolve() : (run.wake = resolve)));
    return Promise.race([done, asked.then(() => (run.parked[0] ? this.asking(run, run.parked[0]) : done))]);
  }

  private asking(run: Live<R>, p: Parked): RoundStep<R> {
    return { kind: 'asking', ref: { run: run.id, seq: p.seq }, question: p.question };
  }

  private async round(run: Live<R>, signal: AbortSignal): Promise<RoundStep<R>> {
    const onAbort = () => run.abort.abort(new RoundCancel('mcp client'));
    if (signal.aborted) onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    let step: RoundStep<R>;
    try {
      step = await this.next(run);
    } catch (err) {
      this.live.delete(run.id);
      throw err;
    } finally {
      run.wake = undefined;
      run.progress = undefined;
      signal.removeEventListener('abort', onAbort);
    }
    if (step.kind === 'done') {
      this.live.delete(run.id);
      return step;
    }
    this.live.set(run.id, run);
    run.timer = setTimeout(() => run.abort.abort(new RoundCancel(`mcp: no answer from the client within ${Math.round(this.o.waitMs / 1000)} s`)), this.o.waitMs);
    // A run that ends while it waits (cancelled, the server stopping) leaves the rounds.
    const forget = () => (clearTimeout(run.timer), this.live.delete(run.id));
    void run.result.then(forget, forget);
    return step;
  }
}
