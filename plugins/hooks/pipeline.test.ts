import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Decision } from '../../ports/approval.js';
import { createMemoryFs } from '../../adapters/fs/memory.js';
import { createMemorySubprocess } from '../../adapters/subprocess/memory.js';
import type { ToolDefinition } from '../../ports/tools.js';
import { createToolPipeline, type HookProblem } from './pipeline.js';
import { executeTool } from '../../actors/execute-tool.js';
import { HookRegistry } from './registry.js';
import { mulberry32 as seededRandom } from '../../test/sweep/prng.js';
import type { CallFacts, Guard } from '../../ports/hooks.js';
import type { Listener } from '../../ports/hooks.js';

const call: CallFacts = { turn: 't1', step: 't1.s1', callId: 't1.s1.c1', name: 'bash', arguments: '{"command":"ls"}', args: { command: 'ls' }, readOnly: false, idempotent: false, delegates: false, rendered: 'ls' };

type L = Listener<{ call: CallFacts; policy: Decision }, Decision>;
/** Pre-execute listeners of every temper, and whether each lets the chain go on. */
const LISTENERS: Record<string, { l: L; continues: boolean; verdict?: Decision['kind'] }> = {
  pass: { l: async (_p, next) => void (await next()), continues: true },
  loosen: { l: async (_p, next) => (await next(), { kind: 'allow' }), continues: true },
  launder: { l: async (p, next) => (await next({ ...p, policy: { kind: 'allow' } }), { kind: 'allow' }), continues: true },
  silent: { l: () => undefined, continues: true },
  denyAfter: { l: async (_p, next) => (await next(), { kind: 'deny', reason: 'after' }), continues: true, verdict: 'deny' },
  shortAllow: { l: () => ({ kind: 'allow' }), continues: false },
  deny: { l: () => ({ kind: 'deny', reason: 'hook' }), continues: false, verdict: 'deny' },
  ask: { l: () => ({ kind: 'ask', reason: 'hook asks' }), continues: false, verdict: 'ask' },
  throws: { l: () => { throw new Error('hook broke'); }, continues: false, verdict: 'deny' },
  garbage: { l: () => ({ kind: 'yes' }) as unknown as Decision, continues: false, verdict: 'deny' },
};
const GUARDS: Record<string, { g: Guard; denies: boolean }> = {
  none: { g: () => undefined, denies: false },
  allow: { g: () => ({ kind: 'allow' }), denies: false },
  ask: { g: () => ({ kind: 'ask', reason: 'guards cannot ask' }), denies: false },
  deny: { g: () => ({ kind: 'deny', reason: 'guard' }), denies: true },
  asyncDeny: { g: async () => ({ kind: 'deny', reason: 'guard later' }), denies: true },
  throws: { g: () => { throw new Error('guard broke'); }, denies: true },
};
const POLICIES: Decision[] = [{ kind: 'allow' }, { kind: 'ask', reason: 'policy asks' }, { kind: 'deny', reason: 'policy "never"' }];
const rank = { allow: 0, ask: 1, deny: 2 } as const;
const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;

describe('the pre-execute decision (I6)', () => {
  it('never reverses a deny: over 3,000 generated orderings of hooks and guards, the verdict is exactly as strict as the strictest voice that was heard', async () => {
    for (let seed = 1; seed <= 3000; seed++) {
      const r = seededRandom(seed);
      const hooks = new HookRegistry();
      const ls = Array.from({ length: Math.floor(r() * 6) }, () => pick(r, Object.keys(LISTENERS)));
      const gs = Array.from({ length: Math.floor(r() * 4) }, () => pick(r, Object.keys(GUARDS)));
      // Interleave registrations of both kinds in a generated order.
      const regs = [...ls.map((k) => ['l', k] as const), ...gs.map((k) => ['g', k] as const)].sort(() => r() - 0.5);
      for (const [i, [kind, k]] of regs.entries()) {
        if (kind === 'l') hooks.on('tool/pre-execute', `${k}#${i}`, LISTENERS[k]!.l);
        else hooks.guard(`${k}#${i}`, GUARDS[k]!.g);
      }
      const policy = pick(r, POLICIES);
      const got = await createToolPipeline(hooks, () => undefined, executeTool).decide(call, policy);

      let want: number = rank[policy.kind];
      for (const l of hooks.listeners('tool/pre-execute')) {
        const spec = LISTENERS[l.owner.split('#')[0]!]!;
        if (spec.verdict) want = Math.max(want, rank[spec.verdict]);
        if (!spec.continues) break;
      }
      if (hooks.guardList().some((g) => GUARDS[g.owner.split('#')[0]!]!.denies)) want = 2;
      expect(rank[got.kind], `seed ${seed}: policy ${policy.kind}, registrations ${JSON.stringify(regs)}`).toBe(want);
    }
  });

  it('runs every guard even when a hook answers early, and reports broken ones', async () => {
    const hooks = new HookRegistry();
    const problems: HookProblem[] = [];
    const seen: string[] = [];
    hooks.on('tool/pre-execute', 'early', () => ({ kind: 'allow' }));
    hooks.on('tool/pre-execute', 'never-reached', () => ({ kind: 'deny', reason: 'x' }));
    hooks.guard('watcher', (c) => void seen.push(c.callId));
    hooks.guard('broken', () => { throw new Error('oops'); });
    const d = await createToolPipeline(hooks, (p) => problems.push(p), executeTool).decide(call, { kind: 'allow' });
    expect(seen).toEqual(['t1.s1.c1']);
    expect(d).toEqual({ kind: 'deny', reason: 'guard broken failed: oops' });
    expect(problems).toEqual([{ hook: 'tool/guard', listener: 'broken', problem: 'threw: oops', turn: 't1', step: 't1.s1', callId: 't1.s1.c1' }]);
  });
});

const ctx = (signal = new AbortController().signal) => ({ fs: createMemoryFs(), subprocess: createMemorySubprocess(), signal });
const tool = (execute: ToolDefinition['execute'], timeoutMs?: number): ToolDefinition => ({
  name: 'probe',
  description: '',
  parameters: z.object({}),
  readOnly: false,
  idempotent: false,
  ...(timeoutMs !== undefined ? { timeoutMs } : {}),
  execute,
  present: () => 'probe',
});

describe('execute and post-execute', () => {
  it('wraps the dispatch (metrics, retry) and lets post-execute block a result into BLOCKED', async () => {
    const hooks = new HookRegistry();
    const log: string[] = [];
    let runs = 0;
    hooks.on('tool/execute', 'metrics', async (_p, next) => {
      log.push('before');
      const out = await next();
      log.push(`after ${out.status}`);
      return out;
    });
    hooks.on('tool/execute', 'retry-once', async (_p, next) => {
      const out = await next();
      return out.status === 'error' ? next() : out;
    });
    hooks.on('tool/post-execute', 'secrets', ({ output }) => (output.content.includes('SECRET') ? { kind: 'block', feedback: 'the output held a secret' } : { kind: 'accept' }));
    const p = createToolPipeline(hooks, () => undefined, executeTool);
    const t = tool(async () => (++runs === 1 ? { status: 'error', content: 'flaky' } : { status: 'ok', content: 'SECRET=1' }));
    const out = await p.execute({ call, tool: t, args: {}, ctx: ctx() });
    expect(runs).toBe(2);
    expect(log).toEqual(['before', 'after ok']);
    expect(out).toMatchObject({ status: 'error', code: 'BLOCKED' });
    expect(out.content).toContain('the output held a secret');
    expect(out.content).not.toContain('SECRET=1');
  });

  it('blocks when a post-execute check throws, and reports a silent one', async () => {
    const hooks = new HookRegistry();
    const problems: string[] = [];
    hooks.on('tool/post-execute', 'silent', () => undefined);
    hooks.on('tool/post-execute', 'broken', () => { throw new Error('scanner down'); });
    const out = await createToolPipeline(hooks, (p) => problems.push(`${p.hook} ${p.listener}: ${p.problem}`), executeTool).execute({ call, tool: tool(async () => ({ status: 'ok', content: 'fine' })), args: {}, ctx: ctx() });
    expect(out).toMatchObject({ status: 'error', code: 'BLOCKED' });
    expect(problems).toEqual(['tool/post-execute silent: neither called next() nor returned a decision; skipped', 'tool/post-execute broken: threw: scanner down']);
  });

  it('enforces the declared timeout through the execute hook: the signal the tool received is the one that aborted', async () => {
    const hooks = new HookRegistry();
    let received: AbortSignal | undefined;
    let abortedSignal: AbortSignal | undefined;
    hooks.on('tool/execute', 'tighten', async (p, next) => next({ ...p, timeoutMs: 20 }));
    const t = tool(
      (_args, c) =>
        new Promise(() => {
          received = c.signal;
          c.signal.addEventListener('abort', (e) => (abortedSignal = e.target as AbortSignal));
        }),
      60_000,
    );
    const outer = new AbortController();
    const out = await createToolPipeline(hooks, () => undefined, executeTool).execute({ call, tool: t, args: {}, ctx: ctx(outer.signal) });
    expect(out.code).toBe('TOOL_TIMEOUT');
    expect(received).toBeDefined();
    expect(abortedSignal).toBe(received);
    expect(received!.aborted).toBe(true);
    expect((received!.reason as { code?: string }).code).toBe('TOOL_TIMEOUT');
    expect(outer.signal.aborted).toBe(false);
  });
});
