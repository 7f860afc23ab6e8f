/**
 * Strict `{{name}}` interpolation for prompt templates: a reference to a
 * variable nobody defined is a bug in a plugin, so it throws a named error
 * instead of leaving the braces (or an empty string) in the prompt.
 */

import type { PromptVars } from '../../ports/prompt.js';

export class PromptVariableError extends Error {
  override name = 'PromptVariableError';
  constructor(
    readonly variable: string,
    readonly section: string,
    known: readonly string[],
  ) {
    super(`prompt section "${section}" refers to {{${variable}}}, which is not defined (known: ${known.length ? known.join(', ') : 'none'})`);
  }
}

const REF = /\{\{\s*([A-Za-z_][\w.-]*)\s*\}\}/g;

/** Contract: pure; throws `PromptVariableError` for the first unknown reference, nothing else. */
export function interpolate(template: string, vars: PromptVars, section = 'template'): string {
  return template.replace(REF, (_, name: string) => {
    if (!Object.hasOwn(vars, name)) throw new PromptVariableError(name, section, Object.keys(vars).sort());
    return vars[name]!;
  });
}
