/** The `spawn` subagent provider: a fresh child of the parent's own product, with an empty history. */
import { SESSION, SUBAGENT } from '../../ports/index.js';
import { defineProvider } from '../../ports/provider.js';
import type { ChildRequest, SubagentProvider } from '../../ports/subagents.js';
import { InProcessConfig } from '../../plugins/rows.js';
import type { ServiceLookup } from '../../ports/service.js';


/** A child of the parent's product under approval `never`, the request's tool filter applied; on the row's model, when it names one. */
export function childOf(services: ServiceLookup, req: ChildRequest, config: InProcessConfig = {}) {
  const model = config.model ?? req.model;
  return services.get(SESSION).child({
    id: req.id,
    depth: req.depth,
    approval: 'never',
    ...(req.tools ? { tools: req.tools } : {}),
    ...(req.scoped ? { scoped: req.scoped } : {}),
    ...(req.traceparent ? { traceparent: req.traceparent } : {}),
    ...(model !== undefined ? { model } : {}),
  });
}

export const spawnSubagents = defineProvider({
  seam: SUBAGENT,
  name: 'spawn',
  config: InProcessConfig,
  inject: [SESSION],
  create: (c, services): SubagentProvider => ({
    name: 'spawn',
    advertised: {},
    open: async (req) => childOf(services, req, c),
  }),
});
