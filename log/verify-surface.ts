/**
 * The part of verification that follows what a model can see: which
 * model-visible entries are still visible, and whether a `replace` op cites
 * a span it may shadow (I9: never a call without its result, or the reverse).
 */
import { coverOf, type Visible } from './visible.js';

export class SurfaceTracker {
  /** Every model-visible entry, in seq order. Appending is all most entries cost: a replace (rare) builds what it needs from this. */
  private readonly items: Visible[] = [];
  /** Seqs a replace has shadowed. */
  private readonly shadowed = new Set<number>();

  /** Returns a problem with `e`'s surface op, or undefined; then records `e` as visible. */
  apply(e: Visible): string | undefined {
    const problem = e.surfaceOp === 'append' ? undefined : this.replace(e, e.surfaceOp.start, e.surfaceOp.end);
    this.items.push(e);
    return problem;
  }

  /**
   * A replace shadows every visible item whose cover (its own seq, or for a
   * replacement the span it stands for) lies inside the span, so a summary
   * can take in an earlier summary or a pruned result (ADR 0005). The span's
   * edges must be edges of visible covers.
   */
  private replace(e: Visible, start: number, end: number): string | undefined {
    const seq = e.seq;
    if (start > end) return `replace cites the span ${start}..${end}, which runs backwards`;
    if (end >= seq) return `replace cites the span ${start}..${end}, which does not lie before the entry itself`;
    const vis = this.items.filter((v) => !this.shadowed.has(v.seq));
    const visible = new Set(vis.map((v) => v.seq));
    const bySeq = new Map(this.items.map((v) => [v.seq, v]));
    for (const [edge, side] of [[start, 'start'], [end, 'end']] as const) {
      if (vis.some((v) => coverOf(v)[side] === edge)) continue;
      if (!bySeq.has(edge)) return `replace cites seq ${edge}, which is not a model-visible entry`;
      return `replace cites seq ${edge}, which an earlier replace already shadowed`;
    }
    // step → seq of its answer (when the answer holds tool calls), step → seqs of its tool results.
    const answerOf = new Map<string, number>();
    const resultsOf = new Map<string, number[]>();
    for (const v of this.items) {
      if (v.kind === 'assistant/message' && v.blocks.some((b) => b.type === 'tool-call')) answerOf.set(v.step, v.seq);
      if (v.kind === 'tool/result') resultsOf.set(v.step, [...(resultsOf.get(v.step) ?? []), v.seq]);
    }
    const inside = (v: Visible) => {
      const c = coverOf(v);
      return c.start >= start && c.end <= end;
    };
    const cut = vis.find((v) => !inside(v) && coverOf(v).start <= end && coverOf(v).end >= start);
    if (cut) return `replace ${start}..${end} cuts through the span ${coverOf(cut).start}..${coverOf(cut).end} that seq ${cut.seq} stands for`;
    const shadowed = vis.filter(inside);
    for (const v of shadowed) {
      if (v.kind === 'assistant/message' && answerOf.get(v.step) === v.seq) {
        const outside = (resultsOf.get(v.step) ?? []).filter((r) => visible.has(r) && !inside(bySeq.get(r)!));
        if (outside.length) return `replace ${start}..${end} shadows the tool calls of ${v.step} but not their results (seq ${outside.join(', ')})`;
      }
      // A pruned result stands in for its own original: the call keeps its (shorter) result.
      if (v.kind === 'tool/result' && !(e.kind === 'tool/result' && e.callId === v.callId)) {
        const answer = answerOf.get(v.step);
        if (answer !== undefined && visible.has(answer) && !inside(bySeq.get(answer)!)) return `replace ${start}..${end} shadows the result ${v.callId} but not its call (seq ${answer})`;
      }
    }
    for (const v of shadowed) this.shadowed.add(v.seq);
    return undefined;
  }
}

