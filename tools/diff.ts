/**
 * The change an `edit_file` or `write_file` call asks to make, as lines a
 * person reads before approving it: the terminal question, the viewer's card
 * (carried in `approval/request.change`) and the replay page all show this
 * one rendering. `write_file` is shown as its whole new content: the hosts
 * that show it (a browser, a relaying worker) cannot read the workspace, and
 * a read at question time could differ from the file the write replaces.
 */
import { z } from 'zod';

export const DiffLine = z.strictObject({ op: z.enum([' ', '-', '+']), text: z.string() });
export type DiffLine = z.infer<typeof DiffLine>;

export const Change = z.strictObject({
  tool: z.enum(['edit_file', 'write_file']),
  path: z.string(),
  lines: z.array(DiffLine),
});
export type Change = z.infer<typeof Change>;

/** Past this many cells the quadratic table is skipped: every old line removed, then every new line added (still whole). */
const MAX_CELLS = 4_000_000;

const linesOf = (s: string): string[] => {
  if (s === '') return [];
  const lines = s.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
};

/**
 * A line diff of `before` → `after` (longest common subsequence), every line
 * of both present once. Contract: pure; total over any strings.
 */
export function diffLines(before: string, after: string): DiffLine[] {
  const a = linesOf(before);
  const b = linesOf(after);
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const out: DiffLine[] = a.slice(0, head).map((text) => ({ op: ' ', text }));
  const x = a.slice(head, a.length - tail);
  const y = b.slice(head, b.length - tail);
  if (x.length * y.length > MAX_CELLS) {
    out.push(...x.map((text) => ({ op: '-' as const, text })), ...y.map((text) => ({ op: '+' as const, text })));
  } else {
    // lcs[i][j]: the common subsequence length of x[i..] and y[j..].
    const w = y.length + 1;
    const lcs = new Uint32Array((x.length + 1) * w);
    for (let i = x.length - 1; i >= 0; i--) {
      for (let j = y.length - 1; j >= 0; j--) {
        lcs[i * w + j] = x[i] === y[j] ? lcs[(i + 1) * w + j + 1]! + 1 : Math.max(lcs[(i + 1) * w + j]!, lcs[i * w + j + 1]!);
      }
    }
    let i = 0;
    let j = 0;
    while (i < x.length || j < y.length) {
      if (i < x.length && j < y.length && x[i] === y[j]) out.push({ op: ' ', text: x[i++]! }), j++;
      else if (i < x.length && (j === y.length || lcs[(i + 1) * w + j]! >= lcs[i * w + j + 1]!)) out.push({ op: '-', text: x[i++]! });
      else out.push({ op: '+', text: y[j++]! });
    }
  }
  out.push(...a.slice(a.length - tail).map((text) => ({ op: ' ' as const, text })));
  return out;
}

const str = (o: Record<string, unknown>, k: string): string | undefined => (typeof o[k] === 'string' ? (o[k] as string) : undefined);

/**
 * The change a call asks for, from its parsed arguments; `undefined` for any
 * other tool or arguments that are not that tool's. Contract: pure, never throws.
 */
export function changeOf(tool: string, args: unknown): Change | undefined {
  if (!args || typeof args !== 'object' || Array.isArray(args)) return undefined;
  const o = args as Record<string, unknown>;
  const path = str(o, 'path');
  if (path === undefined) return undefined;
  if (tool === 'edit_file') {
    const oldText = str(o, 'old_text');
    const newText = str(o, 'new_text');
    if (oldText === undefined || newText === undefined) return undefined;
    return { tool, path, lines: diffLines(oldText, newText) };
  }
  if (tool === 'write_file') {
    const content = str(o, 'content');
    if (content === undefined) return undefined;
    return { tool, path, lines: diffLines('', content) };
  }
  return undefined;
}
