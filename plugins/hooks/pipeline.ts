/**
 * The tool pipeline around every call, and the turn's pre-step, built from a
 * registry: guards and `tool/pre-execute` decide, `tool/execute` wraps the
 * dispatch, `tool/post-execute` may block the result; `pre-step` may reject
 * or rewrite input. The session provides these as the machines' actors.
 */
import type { Decision } from '../../machines/tool-call.machine.js';
import type { PreStepDecision } from '../../machines/turn.machine.js';
import { executeTool } from '../../tools/execute.js';
import type { ToolOutput } from '../../ports/tools.js';
import { combineDecisions, isDecision, isPostDecision, isPreStepDecision, stricter, stricterPost, stricterPreStep } from './decisions.js';
import type { HookRegistry } from './registry.js';
import type { CallFacts, ExecutePayload, PreStepPayload } from '../../ports/hooks.js';
import { runWaterfall, runWaterfallNow } from '../waterfall.js';

export interface HookProblem {
  hook: string;
  listener: string;
  problem: string;
  turn?: string;
  step?: string;
  callId?: string;
}

export interface ToolPipeline {
  /** Contract: never rejects; the verdict is at least as strict as `policy`, every guard's deny and every pre-execute deny (I6). */
  decide(call: CallFacts, policy: Decision): Promise<Decision>;
  /**
   * `decide`'s verdict without waiting when nothing it asks answers with a promise (ADR 0036): every guard and
   * every `tool/pre-execute` listener it reaches answered at once. Otherwise `pending`, the verdict to come. Either
   * way each guard and listener has been asked once, and is not asked again. Contract: never throws; `pending`
   * never rejects.
   */
  decideNow(call: CallFacts, policy: Decision): { decision: Decision } | { pending: Promise<Decision> };
  /** Contract: never rejects; runs the execute chain (ending in `executeTool`, with its deadline) and then post-execute. */
  execute(payload: Omit<ExecutePayload, 'timeoutMs'> & { timeoutMs?: number }): Promise<ToolOutput>;
  /** Contract: rejects only when a listener throws (the turn then ends with `PRE_STEP_FAILED`). */
  preStep(payload: PreStepPayload, terminal: (p: PreStepPayload) => Promise<PreStepDecision>): Promise<PreStepDecision>;
}

const describe = (err: unknown) => (err instanceof Error ? err.message : String(err));
const isToolOutput = (v: unknown): v is ToolOutput => {
  const o = v as ToolOutput | null | undefined;
  return (o?.status === 'ok' || o?.status === 'error') && typeof o.content === 'string';
};

export function createToolPipeline(hooks: HookRegistry, report: (p: HookProblem) => void): ToolPipeline {
  const at = (call: CallFacts) => ({ turn: call.turn, step: call.step, callId: call.callId });

  /** A guard's answer as a decision: anything but a deny with a reason allows. */
  const guardDecision = (d: Decision | void): Decision => (d?.kind === 'deny' && typeof d.reason === 'string' ? d : { kind: 'allow' });
  /** A guard that threw or rejected denies, and is reported. */
  const guardFailed = (owner: string, call: CallFacts, err: unknown): Decision => {
    report({ hook: 'tool/guard', listener: owner, problem: `threw: ${describe(err)}`, ...at(call) });
    return { kind: 'deny', reason: `guard ${owner} failed: ${describe(err)}` };
  };

  /**
   * Every guard, each invoked once and before anything is awaited (so guards see calls in the order they were
   * decided): their decisions, or the promise of them when one answered with a promise.
   */
  function askGuards(call: CallFacts): Decision[] | Promise<Decision[]> {
    const answers: (Decision | Promise<Decision>)[] = [];
    let waits = false;
    for (const { owner, guard } of hooks.guardList()) {
      try {
        const d = guard(call);
        if (d && typeof (d as Promise<Decision | void>).then === 'function') {
          waits = true;
          answers.push(Promise.resolve(d as Promise<Decision | void>).then(guardDecision, (err: unknown) => guardFailed(owner, call, err)));
        } else answers.push(guardDecision(d as Decision | void));
      } catch (err) {
        answers.push(guardFailed(owner, call, err));
      }
    }
    return waits ? Promise.all(answers) : (answers as Decision[]);
  }

  /** The pre-execute chain's verdict, at once or to come; a chain that fails denies. */
  function askHooks(call: CallFacts, policy: Decision): Decision | Promise<Decision> {
    const failed = (err: unknown): Decision => ({ kind: 'deny', reason: `pre-execute failed: ${describe(err)}` });
    try {
      const r = runWaterfallNow<{ call: CallFacts; policy: Decision }, Decision>(hooks.listeners('tool/pre-execute'), { call, policy }, (p) => p.policy, {
        hook: 'tool/pre-execute',
        clamp: stricter,
        accepts: isDecision,
        onThrow: (owner, err) => ({ kind: 'deny', reason: `pre-execute hook ${owner} failed: ${describe(err)}` }),
        report: (listener, problem) => report({ hook: 'tool/pre-execute', listener, problem, ...at(call) }),
      });
      return r instanceof Promise ? r.catch(failed) : r;
    } catch (err) {
      return failed(err);
    }
  }

  function decideNow(call: CallFacts, policy: Decision): { decision: Decision } | { pending: Promise<Decision> } {
    const guards = askGuards(call);
    const hooked = askHooks(call, policy);
    if (Array.isArray(guards) && !(hooked instanceof Promise)) return { decision: combineDecisions([policy, ...guards, hooked]) };
    return { pending: Promise.all([guards, hooked]).then(([g, h]) => combineDecisions([policy, ...g, h])) };
  }

  return {
    async decide(call, policy) {
      const now = decideNow(call, policy);
      return 'decision' in now ? now.decision : now.pending;
    },

    decideNow,

    async execute(payload) {
      const { call } = payload;
      let output: ToolOutput;
      try {
        output = await runWaterfall(
          hooks.listeners('tool/execute'),
          { ...payload, timeoutMs: payload.timeoutMs ?? payload.tool.timeoutMs },
          (p) => executeTool(p.tool, p.args, p.ctx, p.timeoutMs === undefined ? {} : { timeoutMs: p.timeoutMs }),
          {
            hook: 'tool/execute',
            accepts: isToolOutput,
            onThrow: (owner, err) => ({ status: 'error', code: 'TOOL_ERROR', content: `execute hook ${owner} failed: ${describe(err)}` }),
            report: (listener, problem) => report({ hook: 'tool/execute', listener, problem, ...at(call) }),
          },
        );
      } catch (err) {
        output = { status: 'error', code: 'TOOL_ERROR', content: describe(err) };
      }
      const post = await runWaterfall(hooks.listeners('tool/post-execute'), { call, output }, async () => ({ kind: 'accept' as const }), {
        hook: 'tool/post-execute',
        clamp: stricterPost,
        accepts: isPostDecision,
        // A check that cannot run must not wave a result through.
        onThrow: (owner, err) => ({ kind: 'block' as const, feedback: `post-execute check ${owner} failed: ${describe(err)}` }),
        report: (listener, problem) => report({ hook: 'tool/post-execute', listener, problem, ...at(call) }),
      }).catch((err: unknown) => ({ kind: 'block' as const, feedback: `post-execute failed: ${describe(err)}` }));
      if (post.kind === 'accept') return output;
      return { status: 'error', code: 'BLOCKED', content: `Blocked after it ran: ${post.feedback}. Its output is withheld.` };
    },

    preStep(payload, terminal) {
      return runWaterfall(hooks.listeners('pre-step'), payload, terminal, {
        hook: 'pre-step',
        clamp: stricterPreStep,
        accepts: isPreStepDecision,
        report: (listener, problem) => report({ hook: 'pre-step', listener, problem, turn: payload.turn }),
      });
    },
  };
}
