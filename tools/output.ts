/** Small constructors for tool results, so every tool words failures the same way. */
import { codes, type CodeOf } from '../log/codes.js';
import { ToolError } from '../ports/tool-error.js';
import type { ToolOutput } from '../ports/tools.js';

/** The built-in tools' own failure codes (a refusal of the fs seam keeps its `FsCode`). */
export const BuiltinCode = codes({
  SPAWN_FAILED: 'The command could not be started.',
  EXIT_NONZERO: 'The command ran and exited with a non-zero status.',
  SANDBOX_LIMIT: 'The command hit a sandbox limit (memory, processes, output).',
  BINARY_FILE: 'The file is binary; the tool reads or edits text only.',
  NOT_UTF8: 'The file is not valid UTF-8.',
  FILE_TOO_LARGE: 'The file is larger than the tool handles.',
  EDIT_NOT_FOUND: 'The text to replace was not found.',
  EDIT_AMBIGUOUS: 'The text to replace occurs more than once.',
  INVALID_PATTERN: 'The glob or regular expression is not valid.',
  GREP_FAILED: 'grep could not run the pattern.',
  GREP_TIMEOUT: 'grep ran past its time.',
  OFFSET_OUT_OF_RANGE: 'The offset is past the end of the file.',
});
export type BuiltinCode = CodeOf<typeof BuiltinCode>;

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
