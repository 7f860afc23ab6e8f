/**
 * The host's own count of a script's `agent()` calls. Whatever the worker
 * says, the main thread admits at most `maxAgents` requests in a run and
 * runs at most `concurrency` at once; a request past the limit is answered
 * with the fatal WORKFLOW_TOO_MANY_AGENTS and never reaches `run`. The
 * in-script counter of `script-runtime.ts` is a courtesy that gives the
 * script the same error early; this one is the limit.
 */
import { z } from 'zod';
import { WORKFLOW_CODES, type AgentAnswer, type AgentCall } from '../../ports/workflow.js';

/** An `agent` message as the worker posts it: parsed here, at the boundary. */
export const AgentRequest = z.strictObject({
  type: z.literal('agent'),
  id: z.int().nonnegative(),
  prompt: z.string().min(1),
  options: z.strictObject({ provider: z.string().optional(), tools: z.array(z.string()).optional() }).default({}),
});

export interface AgentGate {
  /** One message from the worker that claims to be an `agent` request; anything malformed is answered as a bad call (when it names an id) or dropped. */
  request(message: unknown): void;
  /** The run is over: nothing queued starts, no answer is posted. */
  stop(): void;
}

export function createAgentGate(
  limits: { maxAgents: number; concurrency: number },
  run: (call: AgentCall) => Promise<AgentAnswer>,
  answer: (id: number, a: AgentAnswer) => void,
): AgentGate {
  let admitted = 0;
  let active = 0;
  let stopped = false;
  const queue: { id: number; call: AgentCall }[] = [];
  const pump = () => {
    while (!stopped && active < limits.concurrency && queue.length > 0) {
      const { id, call } = queue.shift()!;
      active++;
      void run(call).then((a) => {
        active--;
        if (!stopped) answer(id, a);
        pump();
      });
    }
  };
  return {
    request(message) {
      if (stopped) return;
      const m = AgentRequest.safeParse(message);
      if (!m.success) {
        const id = (message as { id?: unknown } | null)?.id;
        if (typeof id === 'number') answer(id, { ok: false, category: 'fatal', code: WORKFLOW_CODES.badCall, message: 'agent(prompt, options): the call was malformed' });
        return;
      }
      if (++admitted > limits.maxAgents) return answer(m.data.id, { ok: false, category: 'fatal', code: WORKFLOW_CODES.tooManyAgents, message: `this workflow asked for more than ${limits.maxAgents} agents` });
      const { provider, tools } = m.data.options;
      queue.push({ id: m.data.id, call: { prompt: m.data.prompt, options: { ...(provider !== undefined ? { provider } : {}), ...(tools !== undefined ? { tools } : {}) } } });
      pump();
    },
    stop() {
      stopped = true;
      queue.length = 0;
    },
  };
}
