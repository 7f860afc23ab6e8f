/**
 * A tool filter narrows what a child sees, by intersection: the child gets
 * the tools its product offers that the filter names, and never one the
 * filter names that the product lacks. A scoped tool (the one the child
 * answers through, e.g. Ralph's `handoff`) is never hidden.
 */

/** Contract: pure; `offered` in its order, narrowed to `filter` (all when undefined), plus every name in `scoped`. */
export function restrict(offered: readonly string[], filter: readonly string[] | undefined, scoped: ReadonlySet<string> = new Set()): string[] {
  if (filter === undefined) return [...offered];
  const wanted = new Set(filter);
  return offered.filter((name) => wanted.has(name) || scoped.has(name));
}

/** The same rule as a predicate over one name, for a registry that hides what is not visible. */
export function visibleUnder(filter: readonly string[] | undefined, scoped: ReadonlySet<string> = new Set()): ((name: string) => boolean) | undefined {
  if (filter === undefined) return undefined;
  const wanted = new Set(filter);
  return (name) => wanted.has(name) || scoped.has(name);
}
