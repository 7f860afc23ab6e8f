/** Medians only: a mean hides the outliers a benchmark should not be steered by. */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

export async function repeat(n: number, f: () => Promise<number> | number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push(await f());
  return out;
}

/** The `p`-th percentile (0–100) by nearest rank: a value that occurred, never an interpolation. */
export function percentile(xs: readonly number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}

/**
 * The median with its distribution-free confidence interval: the order statistics `k` and `n + 1 - k` (1-based)
 * for the largest `k` with P(Binomial(n, ½) < k) ≤ (1 − level) / 2, so the interval holds the true median with at
 * least `level` whatever the distribution (paired ratios need not be normal). Under 6 values there is no 95%
 * interval: it is the whole range, and `exact` is false.
 */
export function medianCi(xs: readonly number[], level = 0.95): { median: number; low: number; high: number; exact: boolean } {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  if (n === 0) return { median: NaN, low: NaN, high: NaN, exact: false };
  const tail = (1 - level) / 2;
  // P(B < k) = Σ_{i<k} C(n, i) / 2^n, summed in logs' stead as running terms (n is at most a few hundred here).
  let k = 0;
  let below = 0;
  let term = Math.pow(0.5, n);
  for (let i = 0; i < n; i++) {
    if (below + term > tail) break;
    below += term;
    k = i + 1;
    term = (term * (n - i)) / (i + 1);
  }
  return k === 0 ? { median: median(s), low: s[0]!, high: s[n - 1]!, exact: false } : { median: median(s), low: s[k - 1]!, high: s[n - k]!, exact: true };
}
