/**
 * The `validateCall` action of the tool-call machine: the call is checked
 * against its tool's schema (I4) and the answer goes back to the call as
 * `tool.call.validated`. Validation is pure and synchronous, so it is an
 * action rather than an invoked actor (ADR 0007).
 */
import type { ToolCallEvent, Validation } from '../machines/tool-call.machine.js';
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

/** Contract: never throws; answers the call exactly once, synchronously. */
export function validateCallAction(tools: () => ReadonlyMap<string, ToolDefinition>) {
  return ({ self }: { self: { send(event: ToolCallEvent): void } }, call: { name: string; arguments: string }): void => {
    self.send({ type: 'tool.call.validated', validation: validationOf(tools(), call.name, call.arguments) });
  };
}
