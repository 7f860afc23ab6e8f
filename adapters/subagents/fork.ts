/**
 * The `fork` subagent provider: a child of the parent's own product, seeded
 * with the parent's completed turns only (a harness note injected before its
 * first step). The turn that is running — whose half-finished step holds
 * the very call that asked for the fork — is never handed over, so the child
 * never sees a call without its result.
 */
import { renderCompletedTurns } from '../../log/completed-turns.js';
import { SESSION, SUBAGENT } from '../../ports/index.js';
import { defineProvider } from '../../ports/provider.js';
import type { SubagentProvider } from '../../ports/subagents.js';
import { InProcessConfig } from '../../plugins/rows.js';
import { childOf } from './spawn.js';

export const forkNote = (history: string) => `The session that delegated this task had these completed turns:\n\n${history}`;

export const forkSubagents = defineProvider({
  seam: SUBAGENT,
  name: 'fork',
  config: InProcessConfig,
  inject: [SESSION],
  create: (c, services): SubagentProvider => ({
    name: 'fork',
    advertised: {},
    async open(req) {
      const child = childOf(services, req, c);
      const history = renderCompletedTurns(req.parentEntries());
      if (history) await child.send(forkNote(history), 'inject');
      return child;
    },
  }),
});
