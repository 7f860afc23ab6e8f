/** The plugin host's scopes: where services live, and which scope a provided service lands in. */
export interface Provided {
  service: unknown;
  owner: string;
}

/** Where services live. A child scope sees its parent's services; an isolating one keeps its own (all, or the keys listed) to itself. */
export class Scope {
  readonly services = new Map<string, Provided>();
  readonly children: Scope[] = [];

  constructor(
    readonly name: string,
    readonly parent?: Scope,
    private readonly isolate: boolean | readonly string[] = false,
  ) {
    parent?.children.push(this);
  }

  /** Where a service provided from here lands: this scope when it isolates that key (or is the root), else the nearest one up that does. */
  home(key: string): Scope {
    if (!this.parent) return this;
    if (this.isolate === true || (Array.isArray(this.isolate) && this.isolate.includes(key))) return this;
    return this.parent.home(key);
  }

  lookup(key: string): Provided | undefined {
    return this.services.get(key) ?? this.parent?.lookup(key);
  }

  /** This scope and every scope below it. */
  *all(): Generator<Scope> {
    yield this;
    for (const c of this.children) yield* c.all();
  }
}

/** Whether `s` is `ancestor` or lies below it. */
export const inside = (s: Scope, ancestor: Scope): boolean => {
  for (let x: Scope | undefined = s; x; x = x.parent) if (x === ancestor) return true;
  return false;
};
