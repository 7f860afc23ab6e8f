/**
 * The terminal answerer: shows the call as its tool's presenter renders it
 * and reads y / n / a (always: adds a session rule for exactly this call)
 * from the terminal. One question at a time; a closed stdin answers
 * `unavailable`, which denies. `run` mounts it only when stdin is a terminal.
 */
import { createInterface } from 'node:readline';
import type { Answerer } from '../actors/approval.js';

export function terminalAnswerer(out: NodeJS.WritableStream, input: NodeJS.ReadableStream = process.stdin): Answerer {
  let queue: Promise<unknown> = Promise.resolve();
  return (req) => {
    const ask = async () => {
      if (req.signal.aborted) return { outcome: 'cancelled' as const, by: 'terminal' };
      const rl = createInterface({ input, output: out, terminal: false });
      try {
        const answer = await new Promise<string | null>((resolve) => {
          rl.once('line', (l) => resolve(l));
          rl.once('close', () => resolve(null));
          req.signal.addEventListener('abort', () => resolve(null), { once: true });
          out.write(`\n? ${req.presented}\n  ${req.reason}. [y]es / [n]o / [a]lways (this exact call, for this session): `);
        });
        if (answer === null) return { outcome: req.signal.aborted ? ('cancelled' as const) : ('unavailable' as const), by: 'terminal' };
        const a = answer.trim().toLowerCase();
        if (a === 'y' || a === 'yes') return { outcome: 'allowed-once' as const, by: 'terminal' };
        if (a === 'a' || a === 'always') return { outcome: 'allowed-always' as const, by: 'terminal' };
        return { outcome: 'rejected' as const, by: 'terminal' };
      } finally {
        rl.close();
      }
    };
    const next = queue.then(ask, ask);
    queue = next.catch(() => undefined);
    return next;
  };
}
