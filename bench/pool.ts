/** A worker pool for the bench's trials: no more than `width` jobs run at once. */

/** Contract: runs `jobs` `width` at a time, each once; resolves with their results in the jobs' order (rejects with the first job that throws). */
export async function inPool<T>(width: number, jobs: (() => Promise<T>)[]): Promise<T[]> {
  const out: T[] = [];
  let i = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (i < jobs.length) {
      const k = i++;
      out[k] = await jobs[k]!();
    }
  }));
  return out;
}
