/** Small constructors for tool results, so every tool words failures the same way. */
import { ToolError, type ToolOutput } from '../ports/tools.js';

export function ok(content: string): ToolOutput {
  return { status: 'ok', content };
}

export function failure(code: string, content: string): ToolOutput {
  return { status: 'error', code, content };
}

export function fromToolError(err: ToolError): ToolOutput {
  return failure(err.code, err.message);
}

/**
 * What a seam rejected with, as the model reads it: a `ToolError` (a refusal
 * or an `FsIoError`) by its code and words. Anything else is a bug and is
 * rethrown, for the executor to report as `TOOL_ERROR`.
 */
export function fromRejection(err: unknown): ToolOutput {
  if (err instanceof ToolError) return fromToolError(err);
  throw err;
}
