/**
 * Sessions on Postgres with real processes (ADR 0025, docs/design.md §10): a worker
 * paused past its lease (SIGSTOP) is taken over; resumed (SIGCONT), its next
 * append fails `LEASE_LOST` and nothing it did after losing the lease is in
 * the log. A worker killed outright (SIGKILL) during a non-idempotent bash
 * call is refused to a second writer while its lease lasts, then taken over
 * by `resume`, which closes the call as outcome unknown and never runs it
 * again: the marker file shows one run, and the log verifies and replays.
 */
import fs from 'node:fs';
import { hostname } from 'node:os';
import { expect, it } from 'vitest';
import { describeWithPostgres, sqlRows } from '../helpers/postgres.js';
import { cliBuilt, createWorld, waitFor } from './cli-world.js';

/** The tool runs until the test creates `go` in the workspace (at most 20 s). */
const SLOW = {
  label: 'scripted: slow work',
  responses: [{ text: 'working', toolCalls: [{ name: 'bash', arguments: { command: 'echo ran >> marker; for i in $(seq 400); do [ -f go ] && break; sleep 0.05; done' } }] }, { text: 'finished' }],
};
const common = (ws: string) => ['--cwd', ws, '--approval', 'auto', '--sandbox', 'off'];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const kinds = async (url: string, id: string) => (await sqlRows<{ line: string }>(url, 'SELECT line FROM bridle_entries WHERE session = $1 ORDER BY seq', [id])).map((r) => JSON.parse(r.line) as { kind: string; [k: string]: unknown });
/** The one session in a fresh database, once its dispatch is committed. */
async function dispatched(url: string, child: { proc: { exitCode: number | null } }): Promise<string> {
  let id: string | undefined;
  const end = Date.now() + 20_000;
  while (!id) {
    if (child.proc.exitCode !== null) throw new Error('the worker exited before dispatching');
    if (Date.now() > end) throw new Error('timed out waiting for the dispatch to be committed');
    const r = await sqlRows<{ session: string }>(url, `SELECT session FROM bridle_entries WHERE line LIKE '%"kind":"tool/dispatch"%'`).catch(() => []);
    id = r[0]?.session;
    if (!id) await sleep(20);
  }
  return id;
}


describeWithPostgres('sessions on Postgres, with real processes', (db) => {
  it.runIf(cliBuilt)('a worker paused past its lease is taken over; resumed, its next append fails LEASE_LOST and none of it is logged', async () => {
    const url = await db.fresh();
    const w = createWorld();
    try {
      const a = w.spawn(['run', 'do the work', '--store', url, '--lease-ms', '1000', '--model', `scripted:${w.script('slow.json', SLOW)}`, ...common(w.workspace)]);
      const id = await dispatched(url, a);
      await waitFor(() => w.marker().length === 1, 10_000, 'the tool to start');
      a.proc.kill('SIGSTOP');
      await sleep(1600);
      const b = w.spawn(['resume', id, '--store', url]);
      expect((await b.exit).code, b.stderr()).toBe(0);
      expect(b.stderr()).toContain(`took over: pid ${a.proc.pid} on ${hostname()}`);
      const taken = await kinds(url, id);
      fs.writeFileSync(`${w.workspace}/go`, '');
      a.proc.kill('SIGCONT');
      const ra = await a.exit;
      expect(ra.code, a.stderr()).toBe(1);
      expect(a.stderr()).toMatch(/^bridle: the session could not be saved \(.*LEASE_LOST: this writer's lease on the session was lost \(epoch 1\)/m);
      // Nothing of A's after the takeover: the log is as B left it.
      const after = await kinds(url, id);
      expect(after).toEqual(taken);
      const takeover = after.findIndex((e) => e.kind === 'session/takeover');
      expect(after[takeover]).toMatchObject({ stale: { pid: a.proc.pid }, by: { pid: b.proc.pid } });
      expect(after.filter((e) => e.kind === 'tool/result')).toEqual([expect.objectContaining({ code: 'TOOL_OUTCOME_UNKNOWN' })]);
      expect(w.marker()).toEqual(['ran']);
      const check = w.spawn(['replay', id, '--store', url]);
      expect((await check.exit).code, check.stderr()).toBe(0);
    } finally {
      w.cleanup();
    }
  }, 60_000);

  it.runIf(cliBuilt)('a worker killed during a non-idempotent bash call: refused while its lease lasts, then taken over; the call runs once; the log verifies and replays', async () => {
    const url = await db.fresh();
    const w = createWorld();
    try {
      // Long enough that the first resume starts while it lasts, even on a loaded machine where a process takes a second or more to start.
      const LEASE = 4000;
      const a = w.spawn(['run', 'do the work', '--store', url, '--lease-ms', String(LEASE), '--model', `scripted:${w.script('slow.json', SLOW)}`, ...common(w.workspace)]);
      const id = await dispatched(url, a);
      await waitFor(() => w.marker().length === 1, 10_000, 'the tool to start');
      a.proc.kill('SIGKILL');
      await a.exit;
      const killed = Date.now();
      const resume = ['resume', id, '--store', url, '--continue', '--model', `scripted:${w.script('resume.json', { responses: [{ text: 'checked; carrying on' }] })}`, ...common(w.workspace)];
      let first: string | undefined;
      let tookMs = 0;
      for (;;) {
        const b = w.spawn(resume);
        const r = await b.exit;
        if (r.code === 2 && b.stderr().includes('SESSION_LOCKED')) {
          first ??= b.stderr();
          expect(Date.now() - killed).toBeLessThan(LEASE + 3500);
          await sleep(100);
          continue;
        }
        expect(r.code, b.stderr()).toBe(0);
        tookMs = Date.now() - killed;
        expect(b.stderr()).toContain(`took over: pid ${a.proc.pid} on ${hostname()}`);
        break;
      }
      // While the lease lasted, a second writer was refused in one line naming the first.
      expect(first?.trim().split('\n')).toHaveLength(1);
      expect(first).toMatch(new RegExp(`^bridle: SESSION_LOCKED: session is being written by pid ${a.proc.pid} on ${hostname()} \\(since [^)]+\\); its lease \\(epoch 1\\) has not expired; lock: postgres`));
      fs.writeFileSync(`${w.workspace}/go`, '');
      const entries = await kinds(url, id);
      const takeover = entries.findIndex((e) => e.kind === 'session/takeover');
      // Taken over within the lease plus a second (docs/design.md §10), and the start-up of the process that took it (slow on a loaded machine).
      expect(Date.parse(entries[takeover]!.at as string) - killed).toBeLessThan(LEASE + 1000 + 3000);
      expect(tookMs).toBeGreaterThan(0);
      expect(entries[takeover + 1]).toMatchObject({ kind: 'repair', found: 'open-turn' });
      expect(entries.filter((e) => e.kind === 'tool/result')).toEqual([expect.objectContaining({ code: 'TOOL_OUTCOME_UNKNOWN' })]);
      expect(entries.at(-1)).toMatchObject({ kind: 'checkpoint' });
      expect(w.marker()).toEqual(['ran']);
      const check = w.spawn(['replay', id, '--store', url, '--machines']);
      expect((await check.exit).code, check.stderr()).toBe(0);
      expect((await sqlRows(url, 'SELECT owner FROM bridle_sessions WHERE id = $1', [id]))[0]).toEqual({ owner: null });
    } finally {
      w.cleanup();
    }
  }, 60_000);
});
