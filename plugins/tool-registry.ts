/**
 * The `tools` service: the tools a session offers, in registration order,
 * each with its owner. A child's registry may be narrowed (`visible`): a
 * tool it hides still registers (its row mounts as in the parent), but is
 * neither listed nor found.
 */
import { DuplicateToolError, type Disposer, type ToolRegistry } from '../ports/tool-registry.js';
import type { ToolDefinition } from '../ports/tools.js';

export class Tools implements ToolRegistry {
  private readonly byName = new Map<string, { tool: ToolDefinition; owner: string }>();
  private ordered: ToolDefinition[] = [];
  version = 0;

  constructor(private readonly visible?: (name: string) => boolean) {}

  register(tool: ToolDefinition, owner: string): Disposer {
    const taken = this.byName.get(tool.name);
    if (taken) throw new DuplicateToolError(tool.name, taken.owner, owner);
    const entry = { tool, owner };
    this.byName.set(tool.name, entry);
    this.ordered = [...this.ordered, tool];
    this.version++;
    return () => {
      if (this.byName.get(tool.name) !== entry) return;
      this.byName.delete(tool.name);
      this.ordered = this.ordered.filter((t) => t !== tool);
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
