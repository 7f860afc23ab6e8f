/**
 * Subagents: the `delegate` tool runs a task in a child session — its own
 * log, its depth persisted in its `session/start` and checked against a
 * limit, approval policy `never` (I10). The parent's log brackets the work
 * with `subagent/start` and `subagent/end` inside the call.
 *
 * `spawn` starts the child fresh. `fork` also hands it the parent's completed
 * turns (never the running one), rendered as a harness note: the child sees
 * what was settled, not the half-finished step that asked for it.
 */
import { z } from 'zod';
import { deriveMessages } from '../log/derive-messages.js';
import type { Entry } from '../log/entries.js';
import type { ModelMessage } from '../log/messages.js';
import { SESSION, SUBAGENTS, TOOLS } from '../ports/index.js';
import type { SessionControl } from '../ports/session.js';
import type { Subagents } from '../ports/subagents.js';
import { ToolError, type ToolDefinition, type ToolOutput } from '../ports/tools.js';
import type { Plugin } from '../plugins/host.js';

export interface DelegateConfig {
  /** The session that owns the tool (the `session` service). */
  parent: SessionControl;
  /** Where children come from (the `subagents` service). */
  subagents: Subagents;
  /** Deepest allowed child depth (the root session is depth 0). */
  maxDepth: number;
}

const parameters = z.strictObject({
  task: z.string().min(1).describe('What the subagent should find out or do, stated completely: it does not see this conversation unless mode is fork.'),
  mode: z.enum(['spawn', 'fork']).optional().describe('spawn (default): a fresh subagent; fork: it also sees this session\'s completed turns.'),
});
export type DelegateArgs = z.infer<typeof parameters>;

/** Contract: pure; the parent's completed turns (up to the last `turn/end`), rendered for a forked child. */
export function renderCompletedTurns(entries: readonly Entry[]): string {
  const last = entries.findLastIndex((e) => e.kind === 'turn/end');
  if (last < 0) return '';
  const lines = deriveMessages(entries.slice(0, last + 1)).map(renderMessage);
  return lines.join('\n\n');
}

function renderMessage(m: ModelMessage): string {
  if (m.role === 'user') return `USER:\n${m.content}`;
  if (m.role === 'tool') return `TOOL RESULT (${m.toolCallId}):\n${m.content}`;
  const calls = (m.toolCalls ?? []).map((c) => `CALL ${c.name}(${c.arguments}) [${c.id}]`).join('\n');
  return `ASSISTANT:\n${[m.content ?? '', calls].filter(Boolean).join('\n')}`;
}

const finalText = (entries: readonly Entry[]): string => {
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i]!;
    if (e.kind === 'assistant/message') {
      const text = e.blocks.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('');
      if (text) return text;
    }
  }
  return '';
};

export function delegateTool(cfg: DelegateConfig): ToolDefinition<DelegateArgs> {
  return {
    name: 'delegate',
    description:
      'Hand a self-contained task to a subagent and get its report back. The subagent has its own context and log, may only use tools that need no approval (it runs under approval policy "never"), and cannot see this conversation unless mode is fork.',
    parameters,
    readOnly: false,
    idempotent: false,
    present: (a) => `delegate (${a.mode ?? 'spawn'}): ${a.task.length > 70 ? `${a.task.slice(0, 69)}…` : a.task}`,
    async execute(args, ctx): Promise<ToolOutput> {
      const parent = cfg.parent;
      const depth = parent.depth + 1;
      if (depth > cfg.maxDepth) throw new ToolError('DEPTH_LIMIT', `Delegation depth ${depth} is over the limit of ${cfg.maxDepth}; do this task yourself.`);
      if (!ctx.callId) throw new ToolError('NO_CALL_ID', 'delegate needs the id of its call, which this host did not pass');
      const mode = args.mode ?? 'spawn';
      const childId = `${parent.id}.${ctx.callId}`;
      const child = cfg.subagents.spawn({ id: childId, depth });
      parent.record({ kind: 'subagent/start', callId: ctx.callId, child: childId, depth, mode });
      const onAbort = () => void child.cancel('parent');
      ctx.signal.addEventListener('abort', onAbort, { once: true });
      try {
        if (mode === 'fork') {
          const history = renderCompletedTurns(parent.entries());
          if (history) await child.send(`The session that delegated this task had these completed turns:\n\n${history}`, 'inject');
        }
        const out = await child.run(args.task);
        parent.record({ kind: 'subagent/end', callId: ctx.callId, child: childId, reason: out.reason });
        const entries = child.entries();
        const report = finalText(entries.slice(entries.findLastIndex((e) => e.kind === 'turn/start')));
        const where = `(subagent ${childId}, depth ${depth}, log: ${child.location})`;
        if (out.reason !== 'completed') {
          return { status: 'error', code: 'SUBAGENT_FAILED', content: `The subagent's turn ended ${out.reason}${out.code ? ` (${out.code})` : ''}. ${report ? `Its last words:\n${report}\n` : ''}${where}` };
        }
        return { status: 'ok', content: `${report || '(the subagent said nothing)'}\n${where}` };
      } finally {
        ctx.signal.removeEventListener('abort', onAbort);
        await child.close();
      }
    },
  };
}

/** The `tool:delegate` row: offers `delegate` while children may still go deeper (`maxDepth`, `--max-depth`). */
export const delegatePlugin: Plugin<{ maxDepth: number }> = {
  name: 'delegate',
  inject: [TOOLS, SESSION, SUBAGENTS],
  config: z.strictObject({ maxDepth: z.int().min(0).max(8).default(0) }),
  apply(ctx, c) {
    const parent = ctx.get(SESSION);
    if (c.maxDepth > parent.depth) ctx.tools.register(delegateTool({ parent, subagents: ctx.get(SUBAGENTS), maxDepth: c.maxDepth }));
  },
};
