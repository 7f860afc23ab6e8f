/**
 * One registration primitive, four ways to call what registered. A hook is
 * declared once with its mode; `on(hook, owner, fn)` registers for any of
 * them and returns the disposer.
 *
 * - `emit`: fire and forget. Listeners are called in order; nothing is
 *   awaited; a throw or a rejection is reported, never propagated.
 * - `parallel`: fan out, await all. Every listener starts before any is
 *   awaited; resolves when all have settled, with their answers in
 *   registration order; failures are reported and left out.
 * - `serial`: await in order. A listener starts only after the one before it
 *   settled; answers in order; failures reported and left out.
 * - `waterfall`: around-middleware (`runWaterfall`): each listener gets the
 *   payload and `next()`; one that neither calls `next()` nor answers is
 *   reported and skipped.
 */
import type { DispatchMode, Disposer, Listener, Observer } from '../ports/hooks.js';
import { placeByRank, unranked } from './rank-order.js';
import { runWaterfall, type WaterfallOptions } from './waterfall.js';


/** Hook name → its payload, its answer, and its mode. */
export type HookTable = Record<string, { payload: unknown; answer: unknown; mode: DispatchMode; extra?: unknown }>;

/** What an `emit` hook's listeners get after the payload, when its table says (`extra`); else nothing. */
export type ExtraOf<T extends HookTable, K extends keyof T> = T[K] extends { extra: infer X } ? X : undefined;

export type ListenerOf<T extends HookTable, K extends keyof T> = T[K]['mode'] extends 'waterfall'
  ? Listener<T[K]['payload'], T[K]['answer']>
  : Observer<T[K]['payload'], T[K]['answer'], ExtraOf<T, K>>;

export interface Registration<F> {
  /** Who registered it: a plugin's id; named in reports. */
  owner: string;
  listener: F;
  /** The owner's place in mount order when it registered (`placeByRank`). */
  rank: number;
}

/** Where problems go: a listener that threw, or (waterfall) one that was silent. */
export type Report = (owner: string, problem: string) => void;

const describe = (err: unknown) => (err instanceof Error ? err.message : String(err));

export class Dispatcher<T extends HookTable> {
  private readonly lists = new Map<keyof T, Registration<unknown>[]>();

  /** `rankOf` orders owners (the host's mount order), so a reloaded plugin's listeners keep their precedence; without it, registration order. */
  constructor(
    readonly modes: { readonly [K in keyof T]: T[K]['mode'] },
    protected readonly rankOf: (owner: string) => number = unranked,
  ) {}

  /** The one registration primitive. Contract: the disposer is idempotent; a registration made while a dispatch runs counts from the next one. */
  on<K extends keyof T>(hook: K, owner: string, listener: ListenerOf<T, K>): Disposer {
    if (!Object.hasOwn(this.modes, hook)) throw new Error(`no such hook: ${String(hook)}`);
    const entry: Registration<unknown> = { owner, listener, rank: this.rankOf(owner) };
    this.lists.set(hook, placeByRank(this.lists.get(hook) ?? [], entry));
    return () => this.lists.set(hook, (this.lists.get(hook) ?? []).filter((e) => e !== entry));
  }

  listeners<K extends keyof T>(hook: K): readonly Registration<ListenerOf<T, K>>[] {
    return (this.lists.get(hook) ?? []) as Registration<ListenerOf<T, K>>[];
  }

  /** Whether anything listens; callers on a hot path skip building a payload for nobody. */
  has(hook: keyof T): boolean {
    return (this.lists.get(hook)?.length ?? 0) > 0;
  }

  /** Contract: synchronous, never throws; a listener's throw or rejection is reported. */
  emit<K extends keyof T>(hook: K, payload: T[K]['payload'], report: Report, extra?: ExtraOf<T, K>): void {
    this.expect(hook, 'emit');
    for (const { owner, listener } of this.listeners(hook) as Registration<Observer<unknown, unknown, unknown>>[]) {
      try {
        const r = listener(payload, extra);
        if (r && typeof (r as Promise<unknown>).then === 'function') (r as Promise<unknown>).catch((err: unknown) => report(owner, `rejected: ${describe(err)}`));
      } catch (err) {
        report(owner, `threw: ${describe(err)}`);
      }
    }
  }

  /** Contract: never rejects; every listener starts before any is awaited; answers in registration order, failures reported and left out. */
  async parallel<K extends keyof T>(hook: K, payload: T[K]['payload'], report: Report): Promise<T[K]['answer'][]> {
    this.expect(hook, 'parallel');
    const regs = this.listeners(hook) as Registration<Observer<unknown, unknown, unknown>>[];
    const started = regs.map(({ listener }) => {
      try {
        return Promise.resolve(listener(payload, undefined));
      } catch (err) {
        return Promise.reject(err);
      }
    });
    const settled = await Promise.allSettled(started);
    const out: T[K]['answer'][] = [];
    settled.forEach((s, i) => {
      if (s.status === 'rejected') report(regs[i]!.owner, `threw: ${describe(s.reason)}`);
      else if (s.value !== undefined) out.push(s.value as T[K]['answer']);
    });
    return out;
  }

  /** Contract: never rejects; a listener starts after the previous one settled; answers in order, failures reported and left out. */
  async serial<K extends keyof T>(hook: K, payload: T[K]['payload'], report: Report): Promise<T[K]['answer'][]> {
    this.expect(hook, 'serial');
    const out: T[K]['answer'][] = [];
    for (const { owner, listener } of this.listeners(hook) as Registration<Observer<unknown, unknown, unknown>>[]) {
      try {
        const v = await listener(payload, undefined);
        if (v !== undefined) out.push(v as T[K]['answer']);
      } catch (err) {
        report(owner, `threw: ${describe(err)}`);
      }
    }
    return out;
  }

  /** Contract: as `runWaterfall`. */
  waterfall<K extends keyof T>(
    hook: K,
    payload: T[K]['payload'],
    terminal: (p: T[K]['payload']) => Promise<T[K]['answer']>,
    o: Omit<WaterfallOptions<T[K]['answer']>, 'hook'>,
  ): Promise<T[K]['answer']> {
    this.expect(hook, 'waterfall');
    const regs = this.listeners(hook) as readonly Registration<Listener<T[K]['payload'], T[K]['answer']>>[];
    return runWaterfall(regs, payload, terminal, { ...o, hook: String(hook) });
  }

  private expect(hook: keyof T, mode: DispatchMode): void {
    if (this.modes[hook] !== mode) throw new Error(`hook ${String(hook)} is dispatched by ${this.modes[hook] ?? 'nothing'}, not ${mode}`);
  }
}
