/**
 * The sweep's fake tools. What a call does is written in its own arguments
 * (`behave`), chosen by the seeded model, so a world behaves the same however
 * its calls interleave: succeed, fail, throw, raise a ToolError, hang past
 * the deadline (executeTool enforces `timeoutMs`), run slowly enough for a
 * cancel to land, or return something that is not a tool output.
 */
import { z } from 'zod';
import { ToolError } from '../../ports/tool-error.js';
import type { ToolDefinition, ToolOutput } from '../../ports/tools.js';

export const BEHAVIOURS = ['ok', 'ok', 'ok', 'fail', 'throw', 'tool-error', 'hang', 'slow', 'bad-output'] as const;
const Behave = z.enum(['ok', 'fail', 'throw', 'tool-error', 'hang', 'slow', 'bad-output']);
export type Behave = z.infer<typeof Behave>;

/** Short, so a hang costs the sweep little time. */
export const TOOL_TIMEOUT_MS = 5;

export interface ToolLedger {
  /** Tool bodies started, by tool name. */
  started: string[];
}

async function behave(name: string, how: Behave, signal: AbortSignal): Promise<ToolOutput> {
  switch (how) {
    case 'ok':
      return { status: 'ok', content: `${name}: done` };
    case 'fail':
      return { status: 'error', code: 'EXIT_NONZERO', content: `${name}: it failed` };
    case 'throw':
      throw new Error(`${name} crashed`);
    case 'tool-error':
      throw new ToolError('NOT_FOUND', `${name}: no such thing`);
    case 'hang':
      // Ignores its signal on purpose: the executor's deadline must end it.
      return new Promise<ToolOutput>(() => {});
    case 'slow':
      return new Promise<ToolOutput>((resolve) => {
        const t = setTimeout(() => resolve({ status: 'ok', content: `${name}: done, slowly` }), 1);
        signal.addEventListener('abort', () => (clearTimeout(t), resolve({ status: 'error', code: 'ABORTED', content: 'stopped' })), { once: true });
      });
    case 'bad-output':
      return { nope: true } as unknown as ToolOutput;
  }
}

function tool<P extends { behave: Behave }>(name: string, parameters: z.ZodType<P>, readOnly: boolean, idempotent: boolean, ledger: ToolLedger): ToolDefinition<P> {
  return {
    name,
    description: `The sweep's ${name} tool.`,
    parameters,
    readOnly,
    idempotent,
    timeoutMs: TOOL_TIMEOUT_MS,
    execute: (args, ctx) => {
      ledger.started.push(name);
      return behave(name, args.behave, ctx.signal);
    },
    present: (args) => `${name} ${JSON.stringify(args)}`,
  };
}

/** `peek` reads (runs alongside other reads, needs no approval); `poke` writes; `stamp` writes idempotently. */
export function sweepTools(ledger: ToolLedger): ToolDefinition[] {
  return [
    tool('peek', z.strictObject({ key: z.string().min(1), behave: Behave }), true, true, ledger),
    tool('poke', z.strictObject({ key: z.string().min(1), value: z.int(), behave: Behave }), false, false, ledger),
    tool('stamp', z.strictObject({ key: z.string().min(1), behave: Behave }), false, true, ledger),
  ];
}
