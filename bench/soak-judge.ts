/** What a killed and resumed trial left, judged (ADR 0028, 0043): bodies run twice, inputs lost. */
import type { Entry, EntryOf } from '../log/entries.js';

export interface Judged {
  ranTwice: number;
  ranUndispatched: number;
  inputsLost: number;
  /** Marker lines and acknowledged inputs checked (so a soak that checked nothing can be told from a clean one). */
  marks: number;
  inputs: number;
  problems: string[];
}

const counts = (xs: readonly string[]) => xs.reduce((m, x) => m.set(x, (m.get(x) ?? 0) + 1), new Map<string, number>());
const isEntry =
  <K extends Entry['kind']>(kind: K) =>
  (e: Entry): e is EntryOf<K> =>
    e.kind === kind;

/**
 * Contract: pure. What a trial's final log and marker file say: each body that ran (a marker line names its
 * call) ran once and had its dispatch logged; each input saved before the kill (`saved`) or acknowledged
 * to its sender (`acked`, by text) is in the log, and exactly one turn took it.
 */
export function judge(o: {
  entries: readonly Entry[];
  /** The subagents' logs: their bodies mark the same file, and each needs its dispatch in its own log. */
  children?: readonly (readonly Entry[])[];
  marks: readonly string[];
  saved: readonly EntryOf<'session/input'>[];
  acked: readonly string[];
}): Judged {
  const j: Judged = { ranTwice: 0, ranUndispatched: 0, inputsLost: 0, marks: o.marks.length, inputs: 0, problems: [] };
  // Call ids repeat across logs (every child has a t1.s1.c1): a call is its log's index and its id.
  const logs = [o.entries, ...(o.children ?? [])];
  const dispatched = new Set(logs.flatMap((es, i) => es.filter(isEntry('tool/dispatch')).map((d) => `${i}:${d.callId}`)));
  const callOf = new Map(logs.flatMap((es, i) => es.filter(isEntry('tool/call')).map((c) => [/echo (t\d+k\d+)/.exec(c.arguments)?.[1], `${i}:${c.callId}`] as const)));
  for (const label of new Set(o.marks)) {
    const n = o.marks.filter((m) => m === label).length;
    if (n > 1) (j.ranTwice++, j.problems.push(`${label} ran ${n} times`));
    const call = callOf.get(label);
    if (!call || !dispatched.has(call)) (j.ranUndispatched++, j.problems.push(`${label} ran with no dispatch in the log`));
  }
  // A delegating body (workflow, delegate) run again would start its children again.
  for (const [child, n] of counts(o.entries.filter(isEntry('subagent/start')).map((e) => e.child))) {
    if (n > 1) (j.ranTwice++, j.problems.push(`subagent ${child} started ${n} times`));
  }
  const inputs = o.entries.filter(isEntry('session/input'));
  const starts = o.entries.filter(isEntry('turn/start'));
  const takenOnce = (seq: number) => starts.filter((s) => s.from === seq).length === 1;
  const lost = new Set<string>();
  for (const saved of o.saved) if (!inputs.some((i) => i.seq === saved.seq && i.text === saved.text) || !takenOnce(saved.seq)) lost.add(saved.text);
  for (const text of o.acked) {
    const input = inputs.find((i) => i.text === text);
    if (!input || !takenOnce(input.seq)) lost.add(text);
  }
  j.inputs = new Set([...o.saved.map((i) => i.text), ...o.acked]).size;
  j.inputsLost = lost.size;
  for (const text of lost) j.problems.push(`acknowledged input lost: ${JSON.stringify(text)}`);
  return j;
}
