/**
 * The `validateCall` action of the tool-call machine: the call is checked
 * against its tool's schema (I4) as the call is created, and the answer is
 * assigned to its context. Validation is pure and synchronous, so it is an
 * action rather than an invoked actor (ADR 0007), and an `assign` rather than
 * an action answered by an event (ADR 0033).
 */
import { assign } from 'xstate';
import type { ToolCallContext, ToolCallEvent, Validation } from '../machines/tool-call.machine.js';
import type { ToolDefinition } from '../ports/tools.js';
import { validateCall } from '../tools/validate-call.js';

/** What the check alone decides: the call's validation, or a rejection naming the problem. */
export function validationOf(tools: ReadonlyMap<string, ToolDefinition>, name: string, argumentsText: string): Validation {
  try {
    const v = validateCall(tools, name, argumentsText);
    // For the machine, `readOnly` means "may run alongside its read-only neighbours": so may a delegation, which writes nothing itself.
    return v.ok ? { ok: true, readOnly: v.tool.readOnly || v.tool.delegates === true, idempotent: v.tool.idempotent, args: v.args } : { ok: false, code: v.code, message: v.message };
  } catch (err) {
    // A tool's own schema may throw from a refinement: the call is rejected, never run.
    return { ok: false, code: 'VALIDATION_ERROR', message: String(err) };
  }
}

/**
 * Contract: never throws; an `assign` of the call's `validation`, run once as the call is created (ADR 0033).
 * `tools` is asked at that moment, so a catalogue that changed since the session began is the one checked.
 */
export function validateCallAction(tools: () => ReadonlyMap<string, ToolDefinition>) {
  return assign<ToolCallContext, ToolCallEvent, { name: string; arguments: string }, ToolCallEvent, never>({
    validation: (_, call) => validationOf(tools(), call.name, call.arguments),
  });
}
