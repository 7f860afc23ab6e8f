/**
 * The `tools` service: the tools a session offers, each with its owner. The
 * order is the owners' rank, then registration order within an owner: a
 * plugin that registers late (an MCP server that took a while to answer)
 * still lands where its row stands, so the tool list a request carries does
 * not depend on which server answered first. A child's registry may be
 * narrowed (`visible`): a tool it hides still registers (its row mounts as
 * in the parent), but is neither listed nor found.
 */
import { DuplicateToolError, type Disposer, type ToolRegistry } from '../ports/tool-registry.js';
import type { ToolDefinition } from '../ports/tools.js';
import { placeByRank, unranked } from './rank-order.js';

interface Registered {
  tool: ToolDefinition;
  owner: string;
  rank: number;
}

export class Tools implements ToolRegistry {
  private readonly byName = new Map<string, Registered>();
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

  register(tool: ToolDefinition, owner: string): Disposer {
    const taken = this.byName.get(tool.name);
    if (taken) throw new DuplicateToolError(tool.name, taken.owner, owner);
    const entry: Registered = { tool, owner, rank: this.rankOf(owner) };
    this.byName.set(tool.name, entry);
    this.entries = placeByRank(this.entries, entry);
    this.ordered = this.entries.map((e) => e.tool);
    this.version++;
    return () => {
      if (this.byName.get(tool.name) !== entry) return;
      this.byName.delete(tool.name);
      this.entries = this.entries.filter((e) => e !== entry);
      this.ordered = this.entries.map((e) => e.tool);
      this.version++;
    };
  }

  get(name: string): ToolDefinition | undefined {
    if (this.visible && !this.visible(name)) return undefined;
    return this.byName.get(name)?.tool;
  }

  list(): readonly ToolDefinition[] {
    const v = this.visible;
    return v ? this.ordered.filter((t) => v(t.name)) : this.ordered;
  }

  ownerOf(name: string): string | undefined {
    return this.byName.get(name)?.owner;
  }
}
