/**
 * The `workflow` tool (`{ script }`): runs an orchestration script the model
 * writes at call time through the `workflow` seam (an isolated QuickJS VM:
 * the script can do nothing but compute and call `agent()`), where
 * each `agent(prompt, { provider?, tools? })` is a logged subagent of this
 * session — the same delegation as `delegate`'s, bracketed in this call,
 * under approval `never`, at this session's depth + 1 — and its report comes
 * back to the script. A refused or cancelled agent is a `fatal` error in the
 * script; a failed or crashed one is `recoverable` (it nulls its slot in a
 * `pipeline` or `parallel`). The result is the script's plain-JSON return
 * value; a bad script ends the call with a named error, and the session goes
 * on. When the script ends, agents it left running are cancelled, and their
 * brackets close before the result. The agents are the runner's host side, in
 * `actors/workflow-agents.ts`; this file is the tool and its plugin row.
 */
import { z } from 'zod';
import { SESSION, SUBAGENTS, TOOLS, WORKFLOW } from '../../ports/index.js';
import { ToolError } from '../../ports/tool-error.js';
import type { ToolDefinition, ToolOutput } from '../../ports/tools.js';
import type { WorkflowRunner } from '../../ports/workflow.js';
import type { Plugin } from '../../plugins/host.js';
import { workflowAgents, type WorkflowAgentsConfig } from '../../actors/workflow-agents.js';

export interface WorkflowToolConfig extends WorkflowAgentsConfig {
  runner: WorkflowRunner;
}

const parameters = z.strictObject({
  script: z
    .string()
    .min(1)
    .max(100_000)
    .describe(
      'JavaScript, the body of an async function. In scope: agent(prompt, { provider?, tools? }) → Promise<string>, a subagent\'s report; parallel([() => …, …]) → waits for all, in order; pipeline(items, stage1, stage2, …) → each item goes through the stages on its own, so stages overlap; fatal(message, code?) and recoverable(message, code?) → errors to throw (a recoverable one only nulls its slot in parallel or pipeline). Return plain JSON: it is the result.',
    ),
});
export type WorkflowArgs = z.infer<typeof parameters>;

export function workflowTool(cfg: WorkflowToolConfig): ToolDefinition<WorkflowArgs> {
  return {
    name: 'workflow',
    description:
      'Run an orchestration script you write now: it hands tasks to subagents with agent(), in parallel or as a pipeline, and returns plain JSON. Each agent is a subagent with its own context and log, under approval policy "never". Use it for work that splits into independent pieces.',
    parameters,
    readOnly: false,
    idempotent: false,
    // Allowed without a question, as `delegate` is: the runner gives the script no power but agent() (ports/workflow.ts), and each
    // agent is a subagent under `never` in this session's sandbox, with at most this session's tools (ADR 0037).
    delegates: true,
    present: (a) => `workflow (${a.script.length} characters of script)`,
    async execute(args, ctx): Promise<ToolOutput> {
      const callId = ctx.callId;
      if (!callId) throw new ToolError('NO_CALL_ID', 'workflow needs the id of its call, which this host did not pass');
      const ctl = new AbortController();
      const stop = () => ctl.abort();
      ctx.signal.addEventListener('abort', stop, { once: true });
      const agents = workflowAgents(cfg, callId, ctl.signal);
      try {
        const outcome = await cfg.runner.run({ script: args.script, agent: (call) => agents.agent(call), signal: ctl.signal });
        // Agents the script left running (a fatal error escaped past them) are cancelled; their brackets close now.
        ctl.abort();
        await agents.settled();
        if (outcome.ok) return { status: 'ok', content: JSON.stringify(outcome.value, null, 2) };
        return { status: 'error', code: outcome.code, content: `The workflow failed (${outcome.code}, ${outcome.category}): ${outcome.message}` };
      } finally {
        ctx.signal.removeEventListener('abort', stop);
      }
    },
  };
}

/** The `tool:workflow` row: offers `workflow` whenever the registry allows delegation (`--max-depth` ≥ 1). */
export const workflowPlugin: Plugin = {
  name: 'workflow',
  inject: [TOOLS, SESSION, SUBAGENTS, WORKFLOW],
  config: z.strictObject({}),
  apply(ctx) {
    const subagents = ctx.get(SUBAGENTS);
    if (subagents.maxDepth < 1) return;
    const tools = ctx.get(TOOLS);
    ctx.tools.register(workflowTool({ parent: ctx.get(SESSION), subagents, runner: ctx.get(WORKFLOW), offered: () => tools.list().map((t) => t.name) }));
  },
};
