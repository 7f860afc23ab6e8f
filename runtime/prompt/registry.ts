/**
 * The system prompt registry: ordered sections contributed by the session and
 * by plugins, each for the main session, subagents, or both. The prompt is
 * assembled afresh when asked; the session logs it as a `request/header` only
 * when it changed.
 */
import type { Disposer, PromptScope, PromptSection, PromptSections } from '../../ports/prompt.js';
import type { PromptVars } from '../../ports/prompt.js';
import { interpolate } from './interpolate.js';


export class PromptRegistry implements PromptSections {
  private sections: { s: PromptSection; rank: number; n: number }[] = [];
  private added = 0;
  /** Bumped by every change, so callers can cache an assembled prompt. */
  version = 0;

  /** `rankOf` orders owners (the host's mount order), so a reloaded plugin's sections keep their place among equal orders. */
  constructor(private readonly rankOf: (owner: string) => number = () => Number.POSITIVE_INFINITY) {}

  /** Contract: throws if the id is taken; the disposer is idempotent. */
  add(section: PromptSection, owner?: string): Disposer {
    if (this.sections.some((x) => x.s.id === section.id)) throw new Error(`prompt section "${section.id}" is already registered`);
    if (section.template === undefined && section.render === undefined) throw new Error(`prompt section "${section.id}" has neither a template nor a render function`);
    const entry = { s: section, rank: owner === undefined ? Number.POSITIVE_INFINITY : this.rankOf(owner), n: this.added++ };
    // Equal ranks compare as 0 (Infinity - Infinity is NaN), falling back to registration order.
    this.sections = [...this.sections, entry].sort((a, b) => a.s.order - b.s.order || (a.rank === b.rank ? 0 : a.rank - b.rank) || a.n - b.n);
    this.version++;
    return () => {
      const before = this.sections.length;
      this.sections = this.sections.filter((x) => x !== entry);
      if (this.sections.length !== before) this.version++;
    };
  }

  ids(scope?: PromptScope): string[] {
    return this.sections.filter((x) => !scope || !x.s.scopes || x.s.scopes.includes(scope)).map((x) => x.s.id);
  }

  /** Contract: deterministic for the same sections and variables; throws `PromptVariableError` for an unknown reference. */
  assemble(scope: PromptScope, vars: PromptVars): string {
    const parts: string[] = [];
    for (const { s } of this.sections) {
      if (s.scopes && !s.scopes.includes(scope)) continue;
      const text = s.template !== undefined ? interpolate(s.template, vars, s.id) : s.render!(vars);
      if (text && text.trim()) parts.push(text.trim());
    }
    return parts.join('\n\n');
  }
}
