/**
 * The `mock-remote` subagent provider, for tests: a stand-in for an agent
 * that lives elsewhere. It advertises its own limits (`maxDepth`, the tools
 * it can offer), and everything between parent and child crosses a wire of
 * JSON text — requests one way, the child's entries and answers the other,
 * each message parsed again on arrival and delivered after `latencyMs` —
 * so a caller that works against it works against a provider whose child
 * is not an object in its own heap. The child behind the wire is a real
 * bridle session (its own log, depth, approval `never`).
 */
import { z } from 'zod';
import type { Entry } from '../../log/entries.js';
import { SESSION, SUBAGENT } from '../../ports/index.js';
import { defineProvider } from '../../ports/provider.js';
import type { ChildOutcome, ChildSession, SubagentProvider } from '../../ports/subagents.js';
import { childOf } from './spawn.js';

type Request = { id: number; method: 'run'; text: string } | { id: number; method: 'send'; text: string; mode: 'followup' | 'steer' | 'inject' } | { id: number; method: 'cancel' | 'close'; cause?: string };
type Message = { id: number; result?: unknown; error?: string } | { entry: Entry };

export const MockRemoteConfig = z.strictObject({
  /** The deepest child depth it advertises; deeper requests are refused by the registry. */
  maxDepth: z.int().min(1).max(8).optional(),
  /** The tools it advertises; a tool filter naming another is refused by the registry. */
  tools: z.array(z.string().min(1)).optional(),
  latencyMs: z.int().min(0).max(10_000).default(0),
});

export const mockRemoteSubagents = defineProvider({
  seam: SUBAGENT,
  name: 'mock-remote',
  config: MockRemoteConfig,
  inject: [SESSION],
  create: (c, services): SubagentProvider => ({
    name: 'mock-remote',
    advertised: { ...(c.maxDepth !== undefined ? { maxDepth: c.maxDepth } : {}), ...(c.tools ? { tools: c.tools } : {}) },
    async open(req) {
      // The remote end offers what it advertises, at most.
      const tools = c.tools ? (req.tools ?? c.tools).filter((t) => c.tools!.includes(t)) : req.tools;
      const remote = childOf(services, { ...req, ...(tools ? { tools } : {}) });
      return connect(remote, c.latencyMs);
    },
  }),
});

/** The client side of the wire; `remote` is only ever reached through JSON text. */
function connect(remote: ChildSession, latencyMs: number): ChildSession {
  const later = (f: () => void) => (latencyMs > 0 ? void setTimeout(f, latencyMs) : queueMicrotask(f));
  const seen: Entry[] = [];
  const waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let next = 0;
  let pushed = 0;
  const toClient = (text: string) =>
    later(() => {
      const m = JSON.parse(text) as Message;
      if ('entry' in m) return void seen.push(m.entry);
      const w = waiting.get(m.id);
      waiting.delete(m.id);
      if (m.error !== undefined) w?.reject(new Error(m.error));
      else w?.resolve(m.result);
    });
  // The remote end streams every entry of its log as it is appended.
  const pump = () => {
    const all = remote.entries();
    for (; pushed < all.length; pushed++) toClient(JSON.stringify({ entry: all[pushed] }));
  };
  const serve = (text: string) =>
    later(() => {
      const r = JSON.parse(text) as Request;
      const answer = (p: Promise<unknown>) =>
        p.then(
          (result) => (pump(), toClient(JSON.stringify({ id: r.id, result: result ?? null }))),
          (err: unknown) => (pump(), toClient(JSON.stringify({ id: r.id, error: err instanceof Error ? err.message : String(err) }))),
        );
      if (r.method === 'run') answer(remote.run(r.text).then((o) => ({ reason: o.reason, ...(o.code ? { code: o.code } : {}), ...(o.cause ? { cause: o.cause } : {}) })));
      else if (r.method === 'send') answer(Promise.resolve().then(() => remote.send(r.text, r.mode)));
      else if (r.method === 'cancel') answer(remote.cancel(r.cause ?? 'cancel').then(() => null));
      else answer(remote.close());
    });
  const call = (req: { method: Request['method']; text?: string; mode?: string; cause?: string }) =>
    new Promise<unknown>((resolve, reject) => {
      const id = ++next;
      waiting.set(id, { resolve, reject });
      serve(JSON.stringify({ ...req, id }));
    });
  let closed: Promise<void> | undefined;
  pump();
  return {
    id: remote.id,
    location: `mock-remote:${remote.location}`,
    entries: () => seen,
    send: (text, mode) => call({ method: 'send', text, mode }).then(() => undefined),
    run: (text) => call({ method: 'run', text }) as Promise<ChildOutcome>,
    cancel: (cause) => call({ method: 'cancel', cause }),
    close: () => (closed ??= call({ method: 'close' }).then(() => undefined)),
  };
}
