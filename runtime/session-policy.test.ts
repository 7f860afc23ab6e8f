/**
 * What a session was started with, it keeps (ADR 0027): `session/start` logs the policy; a session that goes on
 * with the log under a wider one is refused unless the override is given (and logged), never for a subagent's.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Entry, EntryOf } from '../log/entries.js';
import { verifyLog } from '../log/verify.js';
import { createHarness, type Harness } from '../test/helpers/harness.js';
import { loggedPolicy, loggedWorkspace, PolicyWidenedError, WorkspaceChangedError } from './session-policy.js';

const made: Harness[] = [];
afterEach(() => {
  for (const h of made.splice(0)) h.cleanup();
});
const harness = (...a: Parameters<typeof createHarness>) => {
  const h = createHarness(...a);
  made.push(h);
  return h;
};

async function startedWith(approval: 'never' | 'ask' | 'auto', o: { child?: boolean } = {}): Promise<Entry[]> {
  const h = harness(() => ({ text: 'ok' }), { approval, ...(o.child ? { depth: 1, parent: 'p' } : {}) });
  await h.session.run('first');
  await h.session.close();
  return [...h.entries()];
}

describe('a session keeps the policy it was started with', () => {
  it('session/start records the approval policy, the sandbox, its reach and the allow rules', async () => {
    const h = harness(() => ({ text: 'ok' }), { approval: 'ask', approvalRules: [{ tool: 'bash', pattern: '^ls$' }] });
    const start = h.entries()[0] as EntryOf<'session/start'>;
    expect(start.policy).toEqual({ approval: 'ask', sandbox: 'off', mode: 'full', network: true, allow: [{ tool: 'bash', pattern: '^ls$' }] });
    await h.session.close();
  });

  it('going on under a wider approval is refused, naming the logged and the requested values; nothing is written', async () => {
    const existing = await startedWith('never');
    let thrown: unknown;
    try {
      harness(() => ({ text: 'ok' }), { approval: 'auto', existing });
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(PolicyWidenedError);
    expect((thrown as Error).message).toBe('session test-session was started with approval never, sandbox off, network; approval never → auto would widen it (pass --override-policy to allow it)');
  });

  it('with the override the widening is logged as session/policy before anything runs, and the session runs under it', async () => {
    const existing = await startedWith('never');
    const h = harness(() => ({ text: 'ok' }), { approval: 'auto', existing, overridePolicy: true });
    const added = h.entries().slice(existing.length);
    expect(added.map((e) => e.kind)).toEqual(['session/reopen', 'session/policy']);
    expect(added[1]).toMatchObject({ by: 'override-policy', from: { approval: 'never' }, to: { approval: 'auto' }, ignorable: true });
    await h.session.run('second');
    await h.session.close();
    expect(loggedPolicy(h.entries())?.approval).toBe('auto');
    expect(verifyLog([...h.entries()]).violations).toEqual([]);
  });

  it('a narrowing needs no override and is logged (by flags); the same policy logs nothing', async () => {
    const existing = await startedWith('auto');
    const narrow = harness(() => ({ text: 'ok' }), { approval: 'never', existing });
    expect(narrow.entries().slice(existing.length).map((e) => e.kind)).toEqual(['session/reopen', 'session/policy']);
    expect(narrow.entries().at(-1)).toMatchObject({ by: 'flags', to: { approval: 'never' } });
    await narrow.session.close();
    const same = harness(() => ({ text: 'ok' }), { approval: 'auto', existing });
    expect(same.entries().slice(existing.length).map((e) => e.kind)).toEqual(['session/reopen']);
    await same.session.close();
  });

  it("a subagent's session is never widened, not even with the override", async () => {
    const existing = await startedWith('never', { child: true });
    expect(() => harness(() => ({ text: 'ok' }), { approval: 'ask', existing, overridePolicy: true })).toThrow(/approval never → ask would widen it, and a subagent's session is never widened/);
  });

  it('a log written before session/start carried a policy has none to keep: nothing is compared or logged', async () => {
    const existing = await startedWith('never');
    const { policy: _p, ...bare } = existing[0] as EntryOf<'session/start'>;
    const h = harness(() => ({ text: 'ok' }), { approval: 'auto', existing: [bare as Entry, ...existing.slice(1)] });
    expect(h.entries().slice(existing.length).map((e) => e.kind)).toEqual(['session/reopen']);
    await h.session.close();
  });

  it('session/policy inside a turn is a forged entry', async () => {
    const existing = await startedWith('auto');
    const i = existing.findIndex((e) => e.kind === 'turn/start');
    const p = (existing[0] as EntryOf<'session/start'>).policy!;
    const forged = [...existing.slice(0, i + 1), { seq: 0, at: existing[i]!.at, kind: 'session/policy', from: p, to: p, by: 'flags' } as Entry, ...existing.slice(i + 1)].map((e, k) => ({ ...e, seq: k + 1 }) as Entry);
    expect(verifyLog(forged).violations.map((v) => v.violation)).toContain('forged-entry');
  });

  describe('a continued session runs in its logged workspace (ADR 0041)', () => {
    it('going on in another workspace is refused WORKSPACE_CHANGED naming both paths; nothing is written', async () => {
      const existing = await startedWith('auto');
      const logged = loggedWorkspace(existing)!;
      let thrown: unknown;
      try {
        harness(() => ({ text: 'ok' }), { approval: 'auto', existing, cwd: '/elsewhere' });
      } catch (e) {
        thrown = e;
      }
      expect(thrown).toBeInstanceOf(WorkspaceChangedError);
      expect(thrown).toMatchObject({ code: 'WORKSPACE_CHANGED', logged, requested: '/elsewhere' });
      expect((thrown as Error).message).toContain(`runs in ${logged}, as its log says; /elsewhere is another workspace`);
    });

    it('with moveWorkspace the move is logged as session/policy (cwd from → to), and the log says the new one from then on', async () => {
      const existing = await startedWith('auto');
      const from = loggedWorkspace(existing)!;
      const h = harness(() => ({ text: 'ok' }), { approval: 'auto', existing, cwd: '/elsewhere', moveWorkspace: true });
      const added = h.entries().slice(existing.length);
      expect(added.map((e) => e.kind)).toEqual(['session/reopen', 'session/policy']);
      expect(added[1]).toMatchObject({ by: 'move-workspace', cwd: { from, to: '/elsewhere' } });
      await h.session.close();
      expect(loggedWorkspace(h.entries())).toBe('/elsewhere');
      expect(verifyLog([...h.entries()]).violations).toEqual([]);
      // A narrowing in the same reopening is one entry, by flags, with the move.
      const both = harness(() => ({ text: 'ok' }), { approval: 'never', existing, cwd: '/third', moveWorkspace: true });
      expect(both.entries().at(-1)).toMatchObject({ by: 'flags', to: { approval: 'never' }, cwd: { from, to: '/third' } });
      await both.session.close();
    });

    it("a subagent's session never moves; a move that does not start where the session ran is a forged entry", async () => {
      const child = await startedWith('never', { child: true });
      expect(() => harness(() => ({ text: 'ok' }), { approval: 'never', existing: child, cwd: '/elsewhere', moveWorkspace: true })).toThrow(/a subagent's session never moves/);
      const existing = await startedWith('auto');
      const h = harness(() => ({ text: 'ok' }), { approval: 'auto', existing, cwd: '/elsewhere', moveWorkspace: true });
      await h.session.close();
      const forged = h.entries().map((e) => (e.kind === 'session/policy' ? ({ ...e, cwd: { from: '/not-there', to: '/elsewhere' } } as Entry) : e));
      expect(verifyLog(forged).violations.map((v) => v.message)).toContain(`session/policy moves the workspace from /not-there, but the session ran in ${loggedWorkspace(existing)}`);
    });
  });
});
