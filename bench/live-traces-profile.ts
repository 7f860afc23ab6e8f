/**
 * Where live traces' cost on the sessions' thread goes, from a CPU profile of that thread (ADR 0106): V8's sampling
 * profiler over a few runs of each arm, through the inspector of this very thread. A share of samples does not
 * depend on how many cores the machine had free the way a ratio of two runs' times does, since both halves of it
 * were sampled together. What the plugin costs is the samples whose stack holds a frame of
 * `adapters/tracing/live.js` (the listener, the hand-over, its `postMessage`) or the hook's delivery to it (a
 * `session/entry` emit), over the thread's busy samples (its waits, the flush's included, are `(idle)`). GC is not
 * anyone's frame: its share, traced and untraced, says how much more of it tracing brings.
 *
 * A sample is taken when the profiler's signal reaches the thread; a thread that was off its core gets one on
 * resuming, where it resumed. On a loaded machine the thread is put off its core most often when it wakes another
 * (the export worker, at a hand-over's `postMessage`), so there the plugin's share is an upper bound.
 */
import { Session } from 'node:inspector/promises';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}

export interface Shares {
  /** Busy samples: the thread's own, its waits left out. */
  samples: number;
  /** Share of them in the plugin (its hook delivery included). */
  plugin: number;
  /** Share in the hand-over's `postMessage`, part of `plugin`. */
  postMessage: number;
  /** Share in the garbage collector. */
  gc: number;
}

/** Samples of one or more profiles: busy, and of them in the plugin, in its `postMessage`, in GC. */
export type Counts = [busy: number, plugin: number, post: number, gc: number];

/** The shares of counts summed over profiles. */
export function sharesOf(counts: Counts): Shares {
  const [busy, plugin, post, gc] = counts;
  const share = (x: number) => Number((x / Math.max(1, busy)).toFixed(4));
  return { samples: busy, plugin: share(plugin), postMessage: share(post), gc: share(gc) };
}

function countsOf(nodes: readonly ProfileNode[], samples: readonly number[]): Counts {
  const parent = new Map<number, number>();
  for (const n of nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const byId = new Map(nodes.map((n) => [n.id, n]));
  // What each node's stack holds, found once a node.
  const kind = new Map<number, { busy: boolean; plugin: boolean; post: boolean; gc: boolean }>();
  for (const n of nodes) {
    let plugin = false;
    let post = false;
    let delivered = false;
    let hook = false;
    for (let at: number | undefined = n.id; at !== undefined; at = parent.get(at)) {
      const f = byId.get(at)!.callFrame;
      if (f.url.endsWith('/adapters/tracing/live.js')) plugin = true;
      if (f.functionName === 'postMessage') post = true;
      if (f.functionName === 'emit' && f.url.endsWith('/plugins/dispatch.js')) delivered = true;
      if (f.url.endsWith('/runtime/wiring/taps.js')) hook = true;
    }
    const name = n.callFrame.functionName;
    kind.set(n.id, { busy: name !== '(idle)', plugin: plugin || (delivered && hook), post: plugin && post, gc: name === '(garbage collector)' });
  }
  let busy = 0;
  let plugin = 0;
  let post = 0;
  let gc = 0;
  for (const s of samples) {
    const k = kind.get(s)!;
    if (!k.busy) continue;
    busy++;
    if (k.plugin) plugin++;
    if (k.post) post++;
    if (k.gc) gc++;
  }
  return [busy, plugin, post, gc];
}

/** `run` under the profiler (a sample each `intervalUs`), and the counts of its thread's samples. */
export async function profileCounts(run: () => Promise<unknown>, intervalUs = 100): Promise<Counts> {
  const session = new Session();
  session.connect();
  try {
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: intervalUs });
    await session.post('Profiler.start');
    await run();
    const { profile } = await session.post('Profiler.stop');
    return countsOf(profile.nodes as ProfileNode[], profile.samples ?? []);
  } finally {
    session.disconnect();
  }
}
