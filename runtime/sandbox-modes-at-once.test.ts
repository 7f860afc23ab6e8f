/**
 * Two sandbox modes at once against one backend (course ch. 8: the policy
 * rides each call, the provider holds none of it): one bwrap provider, two
 * sessions, one `read-only` and one `workspace-write`, whose commands run at
 * the same time. Each is confined as its own mode says, whichever came first.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { createBwrapSandbox } from '../adapters/sandbox/bwrap.js';
import type { EntryOf } from '../log/entries.js';
import type { SandboxMode, SandboxService } from '../ports/sandbox.js';
import { createHarness, type Harness } from '../test/helpers/harness.js';
import { describeWithSystemDep, SYSTEM_DEPS } from '../test/helpers/system-deps.js';

const made: string[] = [];
const sessions: Harness[] = [];
afterEach(() => {
  for (const h of sessions.splice(0)) h.cleanup();
  for (const d of made.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
const dir = (under: string, prefix: string) => {
  const d = fs.realpathSync(fs.mkdtempSync(path.join(under, prefix)));
  made.push(d);
  return d;
};

describeWithSystemDep('two sandbox modes at once against one backend', SYSTEM_DEPS.bwrap, (bwrap) => {
  it('a read-only session and a workspace-write session, running together on one bwrap provider, are each confined as their mode says', async () => {
    const shared = createBwrapSandbox({ env: { ...process.env, BRIDLE_BWRAP: bwrap } });
    // Outside both workspaces and not under /tmp, so the private /tmp cannot be what stops a write there.
    const far = dir('/var/tmp', 'bridle-far-');
    let arrived = 0;
    let bothAsked!: () => void;
    const barrier = new Promise<void>((r) => (bothAsked = r));
    // Each command notes when it ran, so the test can see that the two overlapped.
    const command = (name: string) => `date +%s%N; echo x > in-${name}.txt && echo wrote-inside; echo x > ${far}/${name}.txt && echo wrote-outside; sleep 0.6; date +%s%N`;
    const open = (name: string, mode: SandboxMode) => {
      const workspace = dir(os.tmpdir(), `bridle-${name}-`);
      const sandbox: SandboxService = { provider: shared, policy: { mode, workspace, network: false } };
      const h = createHarness(
        async (_req, i) => {
          if (i > 0) return { text: 'done' };
          // The first step of each session waits for the other's, so both commands start together.
          if (++arrived === 2) bothAsked();
          await barrier;
          return { toolCalls: [{ name: 'bash', arguments: { command: command(name) } }] };
        },
        { cwd: workspace, services: { sandbox } },
      );
      sessions.push(h);
      return { h, workspace, name };
    };
    const ro = open('ro', 'read-only');
    const rw = open('rw', 'workspace-write');
    const outs = await Promise.all([ro.h.session.run('try to write'), rw.h.session.run('try to write')]);
    expect(outs.map((o) => o.reason)).toEqual(['completed', 'completed']);

    const resultOf = (h: Harness) => h.entries().find((e): e is EntryOf<'tool/result'> => e.kind === 'tool/result' && e.name === 'bash')!.content;
    const times = (h: Harness) => resultOf(h).match(/^\d{18,}$/gm)!.map(BigInt);
    const [roStart, roEnd] = times(ro.h);
    const [rwStart, rwEnd] = times(rw.h);
    // They overlapped: each started before the other ended.
    expect(roStart! < rwEnd! && rwStart! < roEnd!).toBe(true);

    expect(resultOf(ro.h)).not.toMatch(/wrote-inside|wrote-outside/);
    expect(fs.existsSync(path.join(ro.workspace, 'in-ro.txt'))).toBe(false);
    expect(resultOf(rw.h)).toMatch(/wrote-inside/);
    expect(resultOf(rw.h)).not.toMatch(/wrote-outside/);
    expect(fs.readFileSync(path.join(rw.workspace, 'in-rw.txt'), 'utf8')).toBe('x\n');
    expect(fs.readdirSync(far)).toEqual([]);
  }, 30_000);
});
