/**
 * The export worker runs ten steps of nice below the sessions' thread (ADR 0106), which keeps its own. The worker is
 * the built file's (a worker thread runs JavaScript), so the test needs `npm run build`, as the CLI's tests do.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { WORKER_NICE } from './worker-priority.js';

const built = new URL('../../dist/adapters/tracing/live.js', import.meta.url);
/** Each thread's nice, field 19 of its stat (after the name in parentheses, which may hold spaces). */
const nices = () =>
  new Map(
    readdirSync('/proc/self/task').map((tid) => {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      return [Number(tid), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16])] as const;
    }),
  );

describe.skipIf(process.platform !== 'linux' || !existsSync(built))('the export worker’s priority', () => {
  it('the worker thread is WORKER_NICE below the thread that started it; that thread is as it was', async () => {
    const { LiveTraces } = (await import(built.href)) as typeof import('./live.js');
    const before = nices();
    const own = before.get(Number(readFileSync('/proc/thread-self/stat', 'utf8').split(' ')[0]))!;
    const live = new LiveTraces(undefined, { version: 't', env: {}, worker: true, warn: () => undefined });
    try {
      // A flush answered is a worker started and past its first lines.
      await live.flush();
      const after = nices();
      const started = [...after].filter(([tid]) => !before.has(tid)).map(([, nice]) => nice);
      expect(started).toContain(Math.min(19, own + WORKER_NICE));
      expect(after.get(Number(readFileSync('/proc/thread-self/stat', 'utf8').split(' ')[0]))).toBe(own);
    } finally {
      await live.shutdown();
    }
  });
});
