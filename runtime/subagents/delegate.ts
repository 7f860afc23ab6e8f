/**
 * The `delegate` tool: hands a task to a subagent — a child session with its
 * own log, its depth persisted in its `session/start` and checked against
 * `--max-depth`, approval policy `never` (I10) — through the provider the
 * call names (`spawn` by default). Its approval class is its own: delegating
 * changes nothing in the workspace by itself, and what the child does is
 * governed by the child's own `never`, so a child may delegate in turn, down
 * to the depth limit. Several delegate calls of one answer run at once.
 */
import { z } from 'zod';
import { childSessionId } from '../../log/ids.js';
import { SESSION, SUBAGENTS, TOOLS } from '../../ports/index.js';
import type { SessionControl } from '../../ports/session.js';
import type { ChildModel, Subagents } from '../../ports/subagents.js';
import { ToolError } from '../../ports/tool-error.js';
import type { ToolDefinition, ToolOutput } from '../../ports/tools.js';
import type { Plugin } from '../../plugins/host.js';
import { runDelegation } from '../../actors/delegation.js';
import { InProcessConfig } from '../../plugins/rows.js';

export interface DelegateConfig {
  /** The session that owns the tool (the `session` service). */
  parent: SessionControl;
  /** The registry (the `subagents` service). */
  subagents: Subagents;
  /** The tools the parent's product offers. */
  offered: () => readonly string[];
  /** The model its children run on unless their provider's row names one (ADR 0066); absent: the parent's. */
  model?: ChildModel;
}

const parameters = z.strictObject({
  task: z.string().min(1).describe('What the subagent should find out or do, stated completely: it does not see this conversation (unless the provider is fork).'),
  provider: z
    .string()
    .regex(/^[a-z][a-z0-9-]*$/)
    .optional()
    .describe('Which subagent provider runs it: spawn (default: a fresh subagent), fork (it also sees this session\'s completed turns), or another this session has.'),
  tools: z.array(z.string().min(1)).min(1).optional().describe('Only these tools for the subagent (a subset of yours); default: all it may use.'),
});
export type DelegateArgs = z.infer<typeof parameters>;

const short = (s: string) => (s.length > 70 ? `${s.slice(0, 69)}…` : s);

export function delegateTool(cfg: DelegateConfig): ToolDefinition<DelegateArgs> {
  return {
    name: 'delegate',
    description:
      'Hand a self-contained task to a subagent and get its report back. The subagent has its own context and log and runs under approval policy "never": nobody is asked, so it may read, search, edit files and run commands inside this session\'s sandbox, and anything beyond that is refused; it may delegate further within the depth limit. Several delegate calls in one answer run at the same time.',
    parameters,
    readOnly: false,
    idempotent: false,
    delegates: true,
    present: (a) => `delegate (${a.provider ?? 'spawn'}${a.tools ? `; ${a.tools.join(', ')}` : ''}): ${short(a.task)}`,
    async execute(args, ctx): Promise<ToolOutput> {
      if (!ctx.callId) throw new ToolError('NO_CALL_ID', 'delegate needs the id of its call, which this host did not pass');
      const r = await runDelegation(
        { parent: cfg.parent, registry: cfg.subagents, offered: cfg.offered },
        { callId: ctx.callId, child: childSessionId(cfg.parent.id, ctx.callId), provider: args.provider ?? 'spawn', task: args.task, ...(args.tools ? { tools: args.tools } : {}), ...(cfg.model !== undefined ? { model: cfg.model } : {}), signal: ctx.signal },
      );
      return { status: r.status, content: r.content, ...(r.code ? { code: r.code } : {}) };
    },
  };
}

/**
 * The `tool:delegate` row: offers `delegate` whenever the registry allows
 * any delegation (`--max-depth` ≥ 1), at every depth, so that a call past
 * the limit is refused by name (`DEPTH_LIMIT`) rather than looking like an
 * unknown tool.
 */
export const delegatePlugin: Plugin<InProcessConfig> = {
  name: 'delegate',
  inject: [TOOLS, SESSION, SUBAGENTS],
  config: InProcessConfig,
  apply(ctx, c) {
    const subagents = ctx.get(SUBAGENTS);
    if (subagents.maxDepth < 1) return;
    const tools = ctx.get(TOOLS);
    ctx.tools.register(delegateTool({ parent: ctx.get(SESSION), subagents, offered: () => tools.list().map((t) => t.name), ...(c.model !== undefined ? { model: c.model } : {}) }));
  },
};
