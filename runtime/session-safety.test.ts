/** The approval seam and the hook pipeline as a whole session uses them (I6). */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { checkModelVisibleIsLogged, createHarness, type Harness } from '../test/helpers/harness.js';
import type { Entry, EntryOf } from '../log/entries.js';
import { builtinTools } from '../tools/index.js';
import type { ToolDefinition } from '../ports/tools.js';
import type { Answerer } from '../ports/approval.js';

let h: Harness | undefined;
afterEach(() => h?.cleanup());

const of = <K extends Entry['kind']>(h: Harness, kind: K) => h.entries().filter((e): e is EntryOf<K> => e.kind === kind);
const resultOf = (h: Harness, callId: string) => of(h, 'tool/result').find((r) => r.callId === callId);

const hostile: { name: string; arguments: Record<string, unknown> }[] = [
  { name: 'write_file', arguments: { path: 'a.txt', content: 'x' } },
  { name: 'bash', arguments: { command: 'touch ran.txt' } },
  { name: 'edit_file', arguments: { path: 'keep.txt', old_text: 'keep', new_text: 'changed' } },
  { name: 'read_file', arguments: { path: 'keep.txt' } },
];
const once = (calls: typeof hostile) => (_r: unknown, i: number) => (i === 0 ? { toolCalls: calls } : { text: 'done' });

describe('approval policies', () => {
  it('never: asks nobody; a write inside the workspace runs, a command with the sandbox off is refused by name (ADR 0052)', async () => {
    let asked = 0;
    h = createHarness(once(hostile), { approval: 'never', answerer: async () => (asked++, { outcome: 'allowed-once', by: 'x' }) });
    fs.writeFileSync(path.join(h.workspace, 'keep.txt'), 'keep');
    await h.session.run('try everything');
    expect(asked).toBe(0);
    expect(of(h, 'approval/asked')).toHaveLength(0);
    expect(of(h, 'tool/dispatch').map((d) => d.name)).toEqual(['write_file', 'edit_file', 'read_file']);
    expect(resultOf(h, 't1.s1.c2')).toMatchObject({ status: 'denied', code: 'DENIED', content: expect.stringContaining('SANDBOX_OFF') });
    expect(fs.readdirSync(h.workspace).sort()).toEqual(['a.txt', 'keep.txt']);
    expect(fs.readFileSync(path.join(h.workspace, 'keep.txt'), 'utf8')).toBe('changed');
  });

  for (const [label, answerer] of [
    ['absent', undefined],
    ['throwing', (() => { throw new Error('terminal closed'); }) as Answerer],
    ['rejecting', (async () => { throw new Error('gone'); }) as Answerer],
    ['hanging (answer timeout)', (() => new Promise(() => undefined)) as Answerer],
  ] as const) {
    it(`ask: an ${label} answerer denies, and the decision is logged as unavailable`, async () => {
      h = createHarness(once([hostile[1]!]), { approval: 'ask', answerer, answerTimeoutMs: 30 });
      await h.session.run('run it');
      expect(of(h, 'approval/asked')).toHaveLength(1);
      expect(of(h, 'approval/decided').map((d) => d.outcome)).toEqual(['unavailable']);
      expect(resultOf(h, 't1.s1.c1')).toMatchObject({ status: 'denied', code: 'DENIED' });
      expect(of(h, 'tool/dispatch')).toHaveLength(0);
      expect(fs.existsSync(path.join(h.workspace, 'ran.txt'))).toBe(false);
    });
  }

  it('ask: shows the answerer the call as the presenter renders it', async () => {
    const seen: string[] = [];
    h = createHarness(once([hostile[1]!]), { approval: 'ask', answerer: async (r) => (seen.push(r.presented), { outcome: 'rejected', by: 'test' }) });
    await h.session.run('run it');
    expect(seen).toEqual(['bash: touch ran.txt']);
    expect(resultOf(h, 't1.s1.c1')?.status).toBe('denied');
  });

  it('an "always" answer adds a logged rule for that exact call, which holds for the session and after resume', async () => {
    const same = { name: 'bash', arguments: { command: 'echo hi >> log.txt' } };
    const other = { name: 'bash', arguments: { command: 'echo other >> log.txt' } };
    let asked = 0;
    const answerer: Answerer = async () => (asked++, { outcome: 'allowed-always', by: 'test' });
    h = createHarness((_r, i) => (i < 2 ? { toolCalls: [same] } : { text: 'done' }), { approval: 'ask', answerer });
    await h.session.run('twice');
    expect(asked).toBe(1);
    const decided = of(h, 'approval/decided');
    expect(decided).toHaveLength(1);
    expect(decided[0]).toMatchObject({ outcome: 'allowed-always', rule: { tool: 'bash', pattern: '^echo hi >> log\\.txt$' } });
    expect(fs.readFileSync(path.join(h.workspace, 'log.txt'), 'utf8')).toBe('hi\nhi\n');
    expect(checkModelVisibleIsLogged(h)).toEqual([]);

    // Resume: the rule is rebuilt from the log; a different command still asks (and, with no answerer, is denied).
    const existing = [...h.entries()];
    const first = h;
    h = createHarness((_r, i) => (i === 0 ? { toolCalls: [same, other] } : { text: 'done' }), { approval: 'ask', existing });
    fs.writeFileSync(path.join(h.workspace, 'log.txt'), '');
    await h.session.run('again');
    const asks = of(h, 'approval/asked').filter((a) => a.turn === 't2');
    expect(asks.map((a) => a.callId)).toEqual(['t2.s1.c2']);
    expect(resultOf(h, 't2.s1.c1')?.status).toBe('ok');
    expect(resultOf(h, 't2.s1.c2')?.status).toBe('denied');
    expect(fs.readFileSync(path.join(h.workspace, 'log.txt'), 'utf8')).toBe('hi\n');
    // The resumed session ran in the workspace its log names: the first one's.
    expect(h.workspace).toBe(first.workspace);
    first.cleanup();
  });

  it('rules from flags or config allow matching calls without asking', async () => {
    h = createHarness(once([{ name: 'bash', arguments: { command: 'echo ok' } }, { name: 'bash', arguments: { command: 'echo ok; touch ran.txt' } }]), {
      approval: 'ask',
      approvalRules: [{ tool: 'bash', pattern: '^echo ' }],
    });
    await h.session.run('go');
    expect(of(h, 'approval/asked').map((a) => a.callId)).toEqual(['t1.s1.c2']);
    expect(resultOf(h, 't1.s1.c1')?.status).toBe('ok');
    expect(resultOf(h, 't1.s1.c2')?.status).toBe('denied');
  });
});

describe('hooks in a session', () => {
  it('a post-execute block turns the result into an error the model sees', async () => {
    h = createHarness(once([{ name: 'read_file', arguments: { path: 'secret.txt' } }]), {
      plugins: [{ name: 'no-keys', apply: (ctx) => void ctx.hooks.on('tool/post-execute', ({ output }) => (output.content.includes('sk-') ? { kind: 'block', feedback: 'it contains an API key' } : { kind: 'accept' })) }],
    });
    fs.writeFileSync(path.join(h.workspace, 'secret.txt'), 'sk-12345');
    await h.session.run('read');
    expect(resultOf(h, 't1.s1.c1')).toMatchObject({ status: 'error', code: 'BLOCKED' });
    const seen = JSON.stringify(h.requests[1]!.request.messages);
    expect(seen).toContain('it contains an API key');
    expect(seen).not.toContain('sk-12345');
  });

  it('a listener that neither calls next() nor decides is reported in the log', async () => {
    h = createHarness(once([{ name: 'list_dir', arguments: {} }]), { plugins: [{ name: 'forgetful', apply: (ctx) => void ctx.hooks.on('tool/pre-execute', () => undefined) }] });
    await h.session.run('look');
    expect(of(h, 'hook/report')).toEqual([
      expect.objectContaining({ hook: 'tool/pre-execute', listener: 'forgetful', problem: expect.stringContaining('neither called next()'), callId: 't1.s1.c1' }),
    ]);
    expect(resultOf(h, 't1.s1.c1')?.status).toBe('ok');
  });

  it('a pre-execute deny holds even under approval "auto"; unmounting the plugin lifts it', async () => {
    h = createHarness((_r, i) => (i % 2 === 0 ? { toolCalls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'x' } }] } : { text: 'ok' }), { approval: 'auto' });
    const unmount = h.session.host.mount({ name: 'freeze', apply: (ctx) => void ctx.hooks.on('tool/pre-execute', async (p, next) => (p.call.name === 'write_file' ? { kind: 'deny', reason: 'frozen' } : next())) });
    await h.session.run('one');
    expect(resultOf(h, 't1.s1.c1')).toMatchObject({ status: 'denied', content: expect.stringContaining('frozen') });
    unmount();
    await h.session.run('two');
    expect(resultOf(h, 't2.s1.c1')?.status).toBe('ok');
  });

  it('pre-step listeners can rewrite or reject the input', async () => {
    h = createHarness(() => ({ text: 'ok' }), {
      plugins: [
        { name: 'trim', apply: (ctx) => void ctx.hooks.on('pre-step', async (p, next) => next({ ...p, text: p.text.trim() })) },
        { name: 'gate', apply: (ctx) => void ctx.hooks.on('pre-step', async (p, next) => (p.text === 'forbidden' ? { kind: 'reject', reason: 'not here' } : next())) },
      ],
    });
    await h.session.run('  hello  ');
    const out = await h.session.run('  forbidden ');
    expect(of(h, 'user/message').map((m) => m.text)).toEqual(['hello']);
    expect(out).toMatchObject({ reason: 'blocked', cause: 'not here', steps: 0 });
  });

  it('a tool timeout is enforced through the execute hook: the signal the tool got is the one that aborted', async () => {
    let received: AbortSignal | undefined;
    let fired: AbortSignal | undefined;
    const sleepy: ToolDefinition = {
      name: 'sleepy',
      description: 'waits forever',
      parameters: z.object({}),
      readOnly: true,
      idempotent: true,
      timeoutMs: 25,
      present: () => 'sleepy',
      execute: (_a, ctx) =>
        new Promise(() => {
          received = ctx.signal;
          ctx.signal.addEventListener('abort', (e) => (fired = e.target as AbortSignal));
        }),
    };
    h = createHarness(once([{ name: 'sleepy', arguments: {} }]), { tools: [...builtinTools(), sleepy] });
    await h.session.run('wait');
    // It never settles after its abort: it has not confirmed it stopped, so its outcome is uncertain (ADR 0052).
    expect(resultOf(h, 't1.s1.c1')).toMatchObject({ status: 'unknown', code: 'TOOL_TIMEOUT', verdict: 'uncertain' });
    expect(fired).toBe(received);
    expect((received!.reason as { code: string }).code).toBe('TOOL_TIMEOUT');
  });

  it('the read-only sandbox mode denies file writes but not reads', async () => {
    h = createHarness(once([hostile[0]!, hostile[3]!]), { approval: 'auto', settings: { sandbox: 'bwrap', sandboxMode: 'read-only' } });
    fs.writeFileSync(path.join(h.workspace, 'keep.txt'), 'keep');
    await h.session.run('go');
    expect(resultOf(h, 't1.s1.c1')).toMatchObject({ status: 'denied', content: expect.stringContaining('read-only') });
    expect(resultOf(h, 't1.s1.c2')?.status).toBe('ok');
  });
});
