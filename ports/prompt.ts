/** The prompt's port: sections of the system prompt, contributed by plugins through `ctx.prompt.section(...)`. */
export type Disposer = () => void;

/** Variables a template may use, e.g. `{{cwd}}`, `{{model}}`, `{{tools}}`. */
export type PromptVars = Readonly<Record<string, string>>;

export type PromptScope = 'session' | 'subagent';

export interface PromptSection {
  /** Unique within a registry; named in errors. */
  id: string;
  /** Lower first; equal orders keep registration order. */
  order: number;
  /** Where the section applies (default: both). */
  scopes?: readonly PromptScope[];
  /** A template; every `{{name}}` must be a known variable. */
  template?: string;
  /** Or literal text (never interpolated: file contents may hold braces); empty or undefined leaves the section out. */
  render?: (vars: PromptVars) => string | undefined;
}

/** The `prompt` service. */
export interface PromptSections {
  /** `owner`: the plugin that adds it, so sections of equal order keep their rows' order. Contract: throws if the id is taken; the disposer is idempotent. */
  add(section: PromptSection, owner?: string): Disposer;
}
