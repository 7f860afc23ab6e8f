/**
 * The tool pipeline around every call, and the turn's pre-step, built from a
 * registry: guards and `tool/pre-execute` decide, `tool/execute` wraps the
 * dispatch, `tool/post-execute` may block the result; `pre-step` may reject
 * or rewrite input. The session provides these as the machines' actors.
 */
import type { Decision } from '../../ports/approval.js';
import type { PreStepDecision } from '../../ports/hooks.js';
import type { ToolOutput } from '../../ports/tools.js';
import { combineDecisions, isDecision, isPostDecision, isPreStepDecision, stricter, stricterPost, stricterPreStep } from './decisions.js';
import type { HookRegistry } from './registry.js';
import type { CallFacts, ExecutePayload, PreStepPayload, RunTool } from '../../ports/hooks.js';
import { runWaterfall } from '../waterfall.js';
import { ToolResultCode } from '../../log/codes.js';

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
  /** Contract: never rejects; runs the execute chain (ending in `run`, the executor with its deadline) and then post-execute. */
  execute(payload: Omit<ExecutePayload, 'timeoutMs'> & { timeoutMs?: number }): Promise<ToolOutput>;
  /** Contract: rejects only when a listener throws (the turn then ends with `PRE_STEP_FAILED`). */
  preStep(payload: PreStepPayload, terminal: (p: PreStepPayload) => Promise<PreStepDecision>): Promise<PreStepDecision>;
}

const describe = (err: unknown) => (err instanceof Error ? err.message : String(err));
const isToolOutput = (v: unknown): v is ToolOutput => {
  const o = v as ToolOutput | null | undefined;
  return (o?.status === 'ok' || o?.status === 'error' || o?.status === 'unknown') && typeof o.content === 'string';
};

/** The executor's options for a call without a deadline: one frozen object for all of them. */
const NO_DEADLINE: { timeoutMs?: number } = Object.freeze({});

/** A guard's answer as a verdict: a deny with its reason, else allow (a guard can only deny, I6). */
const guardVerdict = (d: Decision | void): Decision => (d?.kind === 'deny' && typeof d.reason === 'string' ? d : { kind: 'allow' });

/** Where a call's report says it happened. */
const at = (call: CallFacts) => ({ turn: call.turn, step: call.step, callId: call.callId });

const guardFailed = (report: (p: HookProblem) => void, owner: string, call: CallFacts, err: unknown): Decision => {
  report({ hook: 'tool/guard', listener: owner, problem: `threw: ${describe(err)}`, ...at(call) });
  return { kind: 'deny', reason: `guard ${owner} failed: ${describe(err)}` };
};

/**
 * Every guard's verdict, in their order: the list itself when each answered at once, else a promise of it. Every
 * guard is invoked before anything is awaited, so guards see calls in the order they were decided; one that
 * answered without a promise is not made to wait for a turn of the microtask queue. A guard that throws or
 * rejects denies, and is reported.
 */
function runGuards(hooks: HookRegistry, report: (p: HookProblem) => void, call: CallFacts): Decision[] | Promise<Decision[]> {
  const verdicts: (Decision | Promise<Decision>)[] = [];
  let waits = false;
  for (const { owner, guard } of hooks.guardList()) {
    let d: ReturnType<typeof guard>;
    let later: boolean;
    try {
      d = guard(call);
      later = typeof (d as PromiseLike<unknown> | null | undefined)?.then === 'function';
    } catch (err) {
      verdicts.push(guardFailed(report, owner, call, err));
      continue;
    }
    if (later) {
      waits = true;
      verdicts.push(Promise.resolve(d).then(guardVerdict, (err: unknown) => guardFailed(report, owner, call, err)));
    } else verdicts.push(guardVerdict(d as Decision | void));
  }
  return waits ? Promise.all(verdicts) : (verdicts as Decision[]);
}

/** `run` is the executor the `tool/execute` chain ends in (the host passes `actors/execute-tool.ts`). */
export function createToolPipeline(hooks: HookRegistry, report: (p: HookProblem) => void, run: RunTool): ToolPipeline {
  return {
    async decide(call, policy) {
      const guards = runGuards(hooks, report, call);
      const listeners = hooks.listeners('tool/pre-execute');
      // No pre-execute listener: the chain is its terminal, the policy's verdict; no payload, options or closures per call.
      if (listeners.length === 0) return combineDecisions([policy, ...(guards instanceof Promise ? await guards : guards), policy]);
      let hooked: Decision;
      try {
        hooked = await runWaterfall(listeners, { call, policy }, async (p) => p.policy, {
          hook: 'tool/pre-execute',
          clamp: stricter,
          accepts: isDecision,
          onThrow: (owner, err) => ({ kind: 'deny', reason: `pre-execute hook ${owner} failed: ${describe(err)}` }),
          report: (listener, problem) => report({ hook: 'tool/pre-execute', listener, problem, ...at(call) }),
        });
      } catch (err) {
        hooked = { kind: 'deny', reason: `pre-execute failed: ${describe(err)}` };
      }
      return combineDecisions([policy, ...(guards instanceof Promise ? await guards : guards), hooked]);
    },

    async execute(payload) {
      const { call } = payload;
      let output: ToolOutput;
      try {
        output = await runWaterfall(
          hooks.listeners('tool/execute'),
          { ...payload, timeoutMs: payload.timeoutMs ?? payload.tool.timeoutMs },
          (p) => run(p.tool, p.args, p.ctx, p.timeoutMs === undefined ? NO_DEADLINE : { timeoutMs: p.timeoutMs }),
          {
            hook: 'tool/execute',
            accepts: isToolOutput,
            onThrow: (owner, err) => ({ status: 'error', code: ToolResultCode.TOOL_ERROR, content: `execute hook ${owner} failed: ${describe(err)}` }),
            report: (listener, problem) => report({ hook: 'tool/execute', listener, problem, ...at(call) }),
          },
        );
      } catch (err) {
        output = { status: 'error', code: ToolResultCode.TOOL_ERROR, content: describe(err) };
      }
      const postListeners = hooks.listeners('tool/post-execute');
      // No post-execute listener: the chain's terminal accepts, so the output stands as it is.
      if (postListeners.length === 0) return output;
      const post = await runWaterfall(postListeners, { call, output }, async () => ({ kind: 'accept' as const }), {
        hook: 'tool/post-execute',
        clamp: stricterPost,
        accepts: isPostDecision,
        // A check that cannot run must not wave a result through.
        onThrow: (owner, err) => ({ kind: 'block' as const, feedback: `post-execute check ${owner} failed: ${describe(err)}` }),
        report: (listener, problem) => report({ hook: 'tool/post-execute', listener, problem, ...at(call) }),
      }).catch((err: unknown) => ({ kind: 'block' as const, feedback: `post-execute failed: ${describe(err)}` }));
      if (post.kind === 'accept') return output;
      return { status: 'error', code: ToolResultCode.BLOCKED, content: `Blocked after it ran: ${post.feedback}. Its output is withheld.` };
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
