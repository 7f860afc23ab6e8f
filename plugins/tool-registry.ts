/**
 * The `tools` service: the tools a session offers, each with its owner. The
 * order is the owners' rank, then registration order within an owner: a
 * plugin that registers late (an MCP server that took a while to answer)
 * still lands where its row stands, so the tool list a request carries does
 * not depend on which server answered first. A child's registry may be
 * narrowed (`visible`): a tool it hides still registers (its row mounts as
 * in the parent), but is neither listed nor found.
 *
 * Two kinds of registration (course ch. 4): global ones (the product's rows)
 * may never share a name; a tool scoped to one agent (`registerScoped`, the
 * tool a child answers through) shadows a global one of the same name for
 * that agent: the global still registers, whenever it does, but is neither
 * listed nor found while the scoped one stands.
 */
import { DuplicateToolError, type Disposer, type ToolRegistry } from '../ports/tool-registry.js';
import type { ToolDefinition } from '../ports/tools.js';
import { placeByRank, unranked } from './rank-order.js';

interface Registered {
  tool: ToolDefinition;
  owner: string;
  rank: number;
  scoped: boolean;
}

export class Tools implements ToolRegistry {
  private readonly globals = new Map<string, Registered>();
  private readonly scoped = new Map<string, Registered>();
  private entries: Registered[] = [];
  private ordered: ToolDefinition[] = [];
  version = 0;

  /**
   * `visible`: which tools a narrowed (child's) registry lists and finds; `rankOf` orders owners (the host's mount
   * order); without it, or for an owner it does not rank, registration order.
   */
  constructor(
    private readonly visible?: (name: string) => boolean,
    private readonly rankOf: (owner: string) => number = unranked,
  ) {}

  /** Contract: throws `DuplicateToolError` naming both owners if another global tool has the name; a scoped one of that name shadows it. */
  register(tool: ToolDefinition, owner: string): Disposer {
    return this.add(this.globals, { tool, owner, rank: this.rankOf(owner), scoped: false });
  }

  /**
   * A tool of this agent's own: it shadows a global tool of the same name
   * (listed where the scoped one ranks, last unless `owner` is ranked).
   * Contract: throws `DuplicateToolError` if another scoped tool has the name.
   */
  registerScoped(tool: ToolDefinition, owner = 'scoped'): Disposer {
    return this.add(this.scoped, { tool, owner, rank: this.rankOf(owner), scoped: true });
  }

  private add(names: Map<string, Registered>, entry: Registered): Disposer {
    const taken = names.get(entry.tool.name);
    if (taken) throw new DuplicateToolError(entry.tool.name, taken.owner, entry.owner);
    names.set(entry.tool.name, entry);
    this.entries = placeByRank(this.entries, entry);
    this.relist();
    return () => {
      if (names.get(entry.tool.name) !== entry) return;
      names.delete(entry.tool.name);
      this.entries = this.entries.filter((e) => e !== entry);
      this.relist();
    };
  }

  private relist(): void {
    this.ordered = this.entries.filter((e) => e.scoped || !this.scoped.has(e.tool.name)).map((e) => e.tool);
    this.version++;
  }

  private find(name: string): Registered | undefined {
    return this.scoped.get(name) ?? this.globals.get(name);
  }

  get(name: string): ToolDefinition | undefined {
    if (this.visible && !this.visible(name)) return undefined;
    return this.find(name)?.tool;
  }

  list(): readonly ToolDefinition[] {
    const v = this.visible;
    return v ? this.ordered.filter((t) => v(t.name)) : this.ordered;
  }

  ownerOf(name: string): string | undefined {
    return this.find(name)?.owner;
  }
}
