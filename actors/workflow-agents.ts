/**
 * The workflow runner's host side: the `agent()` a workflow script calls, as a delegation of the session
 * that runs the `workflow` call (the same `runDelegation` as `delegate`'s, bracketed in that call, at this
 * session's depth + 1), and the answer it hands back to the script. The runner (the `workflow` seam) only
 * computes; every effect a script has goes through here.
 */
import { workflowAgentSessionId } from '../log/ids.js';
import type { SubagentResult } from '../machines/subagent-result.js';
import type { SessionControl } from '../ports/session.js';
import type { Subagents } from '../ports/subagents.js';
import type { AgentAnswer, AgentCall } from '../ports/workflow.js';
import { runDelegation } from './delegation.js';
import { SubagentCode } from '../log/codes.js';

export interface WorkflowAgentsConfig {
  parent: SessionControl;
  subagents: Subagents;
  offered: () => readonly string[];
}

export interface WorkflowAgents {
  /** Contract: never rejects; a child that fails, crashes or is refused is an answer that says so. */
  agent(call: AgentCall): Promise<AgentAnswer>;
  /** Resolves when every agent started so far has settled (their brackets in the parent's log closed). */
  settled(): Promise<void>;
}

/** Refused (nothing was created) or cancelled: the script cannot go on as planned. A child that ran and failed: that item only. */
export function answerOf(r: SubagentResult): AgentAnswer {
  if (r.status === 'ok') return { ok: true, value: r.report ?? r.content };
  const category = !r.started || r.code === SubagentCode.ABORTED || r.code === SubagentCode.TREE_BUDGET_EXHAUSTED ? 'fatal' : 'recoverable';
  return { ok: false, category, code: r.code ?? SubagentCode.SUBAGENT_FAILED, message: r.content };
}

/** The agents of one `workflow` call `callId`: each a child session numbered in the call, cancelled by `signal`. */
export function workflowAgents(cfg: WorkflowAgentsConfig, callId: string, signal: AbortSignal): WorkflowAgents {
  let n = 0;
  const running = new Set<Promise<SubagentResult>>();
  return {
    async agent(call) {
      const p = runDelegation(
        { parent: cfg.parent, registry: cfg.subagents, offered: cfg.offered },
        { callId, child: workflowAgentSessionId(cfg.parent.id, callId, ++n), provider: call.options.provider ?? 'spawn', task: call.prompt, ...(call.options.tools ? { tools: call.options.tools } : {}), signal },
      );
      running.add(p);
      try {
        return answerOf(await p);
      } finally {
        running.delete(p);
      }
    },
    async settled() {
      await Promise.all(running);
    },
  };
}
