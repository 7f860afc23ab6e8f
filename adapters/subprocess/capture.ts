/**
 * A command's output in bounded memory: what every subprocess provider
 * keeps of stdout and stderr under the spec's `maxOutputBytes`.
 */
export type StreamName = 'stdout' | 'stderr';

interface Captured {
  head: Buffer[];
  headBytes: number;
  tail: Buffer[];
  tailBytes: number;
  total: number;
}

/**
 * Keeps at most `maxBytes` of stdout+stderr: the first half of the budget is
 * shared by both streams' heads in arrival order, the rest holds each
 * stream's latest bytes (the end of a log is where errors are). What falls in
 * between is counted and replaced by a note.
 */
export class OutputCapture {
  private headLeft: number;
  private readonly tailMax: number;
  private readonly streams: Record<StreamName, Captured> = {
    stdout: { head: [], headBytes: 0, tail: [], tailBytes: 0, total: 0 },
    stderr: { head: [], headBytes: 0, tail: [], tailBytes: 0, total: 0 },
  };

  constructor(private readonly maxBytes: number) {
    this.headLeft = Math.floor(Math.max(0, maxBytes) / 2);
    this.tailMax = Math.max(0, maxBytes) - this.headLeft;
  }

  push(name: StreamName, chunk: Buffer): void {
    const s = this.streams[name];
    s.total += chunk.length;
    const toHead = Math.min(this.headLeft, chunk.length);
    if (toHead > 0) {
      s.head.push(chunk.subarray(0, toHead));
      s.headBytes += toHead;
      this.headLeft -= toHead;
    }
    if (toHead === chunk.length) return;
    s.tail.push(chunk.subarray(toHead));
    s.tailBytes += chunk.length - toHead;
    while (s.tailBytes > this.tailMax) {
      const first = s.tail[0]!;
      const excess = s.tailBytes - this.tailMax;
      if (first.length <= excess) {
        s.tail.shift();
        s.tailBytes -= first.length;
      } else {
        s.tail[0] = first.subarray(excess);
        s.tailBytes -= excess;
      }
    }
  }

  finish(): { stdout: string; stderr: string; truncatedBytes: number } {
    const { stdout: out, stderr: err } = this.streams;
    // Both tails together must fit what the heads left; each gets half, and a short one lends the rest.
    const allowed = Math.max(0, this.maxBytes) - out.headBytes - err.headBytes;
    const half = Math.floor(allowed / 2);
    let outTail = Math.min(out.tailBytes, half);
    const errTail = Math.min(err.tailBytes, allowed - outTail);
    outTail = Math.min(out.tailBytes, allowed - errTail);
    const render = (s: Captured, keepTail: number) => {
      const tail = Buffer.concat(s.tail);
      const kept = tail.subarray(tail.length - keepTail);
      const dropped = s.total - s.headBytes - keepTail;
      const note = dropped > 0 ? `\n[... ${dropped} bytes cut ...]\n` : '';
      return { text: Buffer.concat(s.head).toString('utf8') + note + kept.toString('utf8'), dropped };
    };
    const o = render(out, outTail);
    const e = render(err, errTail);
    return { stdout: o.text, stderr: e.text, truncatedBytes: o.dropped + e.dropped };
  }
}
