/**
 * The `mcp` row in whole sessions, against the fixture server as a real
 * process (`npm run build` first): the first request lists its tools however
 * slowly it starts, in row order whichever server answers first; approval
 * by class; a crash mid-call; a server that fails to start; the process
 * stops with the session; the log verifies and replays through the machines.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Entry, EntryOf } from '../../log/entries.js';
import { verifyLog } from '../../log/verify.js';
import type { AnswerRequest } from '../../ports/approval.js';
import { TOOLS } from '../../ports/index.js';
import type { PatchEntry } from '../../plugins/rows.js';
import { replayMachines } from '../../cli/replay-machines.js';
import { createHarness, type Harness } from '../../test/helpers/harness.js';
import type { ResponseFunction } from '../model/scripted.js';
import { FIXTURE, requireFixture } from '../../test/helpers/mcp-fixture.js';
import { tempDir } from '../../test/helpers/temp.js';

let h: Harness | undefined;
beforeAll(() => void requireFixture());
afterEach(async () => {
  await h?.session.close();
  h?.cleanup();
  h = undefined;
});

const row = (name: string, ...args: string[]): PatchEntry => ({ insert: true, id: `mcp:${name}`, use: 'mcp', config: { command: process.execPath, args: [FIXTURE, ...args] } });
/** A row whose server the user vouched for: its readOnlyHint is taken. */
const trusted = (name: string, ...args: string[]): PatchEntry => ({ ...row(name, ...args), config: { command: process.execPath, args: [FIXTURE, ...args], trusted: true } });
const of = <K extends Entry['kind']>(h: Harness, kind: K) => h.entries().filter((e): e is EntryOf<K> => e.kind === kind);
const resultOf = (h: Harness, name: string) => of(h, 'tool/result').find((r) => r.name === name);
const requestTools = (h: Harness, i: number) => (h.requests[i]?.request.tools ?? []).map((t) => t.name);
const running = (marker: string) =>
  readdirSync('/proc').some((p) => {
    try {
      return /^\d+$/.test(p) && readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(marker);
    } catch {
      return false;
    }
  });

const script =
  (...steps: { name: string; arguments: Record<string, unknown> }[][]): ResponseFunction =>
  (_r, i) =>
    i < steps.length ? { toolCalls: steps[i]! } : { text: 'done' };

describe('an mcp row in a session', () => {
  it('its tools are in the first request, however slowly the server starts, and run like any tool (I2, I4)', async () => {
    h = createHarness(script([{ name: 'mcp__fx__echo', arguments: { text: 'hi' } }, { name: 'mcp__fx__echo', arguments: { text: 5 } }]), { patch: [trusted('fx', '--start-delay', '400')] });
    const out = await h.session.run('go');
    expect(out.reason).toBe('completed');
    expect(requestTools(h, 0)).toEqual(expect.arrayContaining(['read_file', 'mcp__fx__echo', 'mcp__fx__write_note', 'mcp__fx__crash']));
    expect(requestTools(h, 0)).not.toContain('mcp__fx__broken schema');
    const results = of(h, 'tool/result').sort((a, b) => a.callId.localeCompare(b.callId));
    expect(results.map((r) => [r.status, r.code])).toEqual([
      ['ok', undefined],
      ['rejected', 'INVALID_ARGUMENTS'],
    ]);
    expect(results[0]!.content).toBe('echo: hi');
    // The invalid call never dispatched.
    expect(of(h, 'tool/dispatch').map((d) => d.callId)).toEqual([results[0]!.callId]);
    const started = of(h, 'mcp/server')[0]!;
    expect(started).toMatchObject({ server: 'mcp:fx', outcome: 'started', ignorable: true });
    expect(started.tools.find((t) => t.name === 'mcp__fx__echo')).toEqual({ name: 'mcp__fx__echo', readOnly: true, idempotent: true });
    expect(started.problems).toEqual([expect.stringMatching(/^"broken schema" left out: its input schema cannot be checked/)]);
    // Logged before the first turn: what the first request offered is on record before it.
    const kinds = h.entries().map((e) => e.kind);
    expect(kinds.indexOf('mcp/server')).toBeLessThan(kinds.indexOf('turn/start'));
  });

  it('lists two servers\' tools in row order even when the first row\'s server answers last', async () => {
    // The slow one serves only once the quick one has answered its tools/list: an order no load can turn around.
    const listed = join(tempDir('bridle-mcp-order-'), 'quick-listed');
    h = createHarness(() => ({ text: 'ok' }), { patch: [row('slow', '--start-after', listed), row('quick', '--listed', listed)] });
    await h.session.run('go');
    const names = requestTools(h, 0).filter((n) => n.startsWith('mcp__'));
    const firstQuick = names.findIndex((n) => n.startsWith('mcp__quick__'));
    expect(names.findLastIndex((n) => n.startsWith('mcp__slow__'))).toBeLessThan(firstQuick);
    expect(of(h, 'mcp/server').map((e) => e.server)).toEqual(['mcp:quick', 'mcp:slow']);
  });

  it('approval by class: a trusted server\'s readOnlyHint tool runs under ask without asking; any other asks, and a rejection runs nothing', async () => {
    const asked: AnswerRequest[] = [];
    const answers = ['rejected', 'allowed-once'] as const;
    h = createHarness(
      script(
        [{ name: 'mcp__fx__echo', arguments: { text: 'look' } }],
        [{ name: 'mcp__fx__write_note', arguments: { file: 'no.txt', text: 'x' } }],
        [{ name: 'mcp__fx__write_note', arguments: { file: 'yes.txt', text: 'y' } }],
      ),
      { patch: [trusted('fx')], approval: 'ask', answerer: async (req) => ({ outcome: answers[asked.push(req) - 1]!, by: 'test' }) },
    );
    await h.session.run('go');
    expect(asked.map((a) => [a.name, a.presented])).toEqual([
      ['mcp__fx__write_note', 'fx: write_note {"file":"no.txt","text":"x"}'],
      ['mcp__fx__write_note', 'fx: write_note {"file":"yes.txt","text":"y"}'],
    ]);
    expect(of(h, 'tool/result').map((r) => r.status)).toEqual(['ok', 'denied', 'ok']);
    expect(existsSync(join(h.workspace, 'no.txt'))).toBe(false);
    expect(readFileSync(join(h.workspace, 'yes.txt'), 'utf8')).toBe('y');
    expect(of(h, 'approval/asked')).toHaveLength(2);
  });

  it('a readOnlyHint tool of a server not marked trusted that writes outside the workspace does not run under never, and asks under ask (issue 20, item 3)', async () => {
    const outside = join(tempDir('bridle-mcp-outside-'), 'planted.txt');
    const call = { name: 'mcp__fx__sneaky_write', arguments: { path: outside, text: 'pwned' } };
    h = createHarness(script([call]), { patch: [row('fx')], approval: 'never' });
    expect((await h.session.run('go')).reason).toBe('completed');
    expect(existsSync(outside)).toBe(false);
    const denied = resultOf(h, 'mcp__fx__sneaky_write')!;
    expect(denied.status).toBe('denied');
    expect(denied.content).toContain('runs outside the sandbox and its row does not say trusted: true, so its readOnlyHint is not taken');
    expect(of(h, 'tool/dispatch')).toEqual([]);
    expect(of(h, 'mcp/server')[0]!.tools.find((t) => t.name === 'mcp__fx__sneaky_write')).toMatchObject({ readOnly: false });
    expect(await replayMachines(h.entries())).toEqual({ identical: true });
    await h.session.close();
    h.cleanup();

    const asked: AnswerRequest[] = [];
    h = createHarness(script([call]), { patch: [row('fx')], approval: 'ask', answerer: async (req) => (asked.push(req), { outcome: 'rejected', by: 'test' }) });
    await h.session.run('go');
    expect(asked.map((a) => [a.name, a.reason])).toEqual([['mcp__fx__sneaky_write', expect.stringContaining('is not taken')]]);
    expect(existsSync(outside)).toBe(false);
  });

  it('a ReDoS pattern in a server\'s input schema: the call reaches the server at once while a timer on the main loop keeps firing (issue 20, item 8)', async () => {
    h = createHarness(script([{ name: 'mcp__fx__match', arguments: { text: `${'a'.repeat(24)}!` } }]), { patch: [row('fx')], approval: 'auto' });
    await h.session.ready();
    let last = performance.now();
    let maxLag = 0;
    const timer = setInterval(() => {
      const now = performance.now();
      maxLag = Math.max(maxLag, now - last);
      last = now;
    }, 20);
    try {
      expect((await h.session.run('go')).reason).toBe('completed');
      // A tick held back by a blocked loop fires only now: give it the chance.
      await new Promise((r) => setTimeout(r, 100));
    } finally {
      clearInterval(timer);
    }
    expect(maxLag).toBeLessThan(1000);
    // bridle left the pattern to the server, which answered.
    expect(resultOf(h, 'mcp__fx__match')).toMatchObject({ status: 'ok', content: 'matched 25 characters' });
    expect(await replayMachines(h.entries())).toEqual({ identical: true });
  });

  it('two rows whose names give one tool prefix: the later is refused by name (MCP_NAME_TAKEN) before it starts; the first keeps its tools (issue 20, item 8)', async () => {
    h = createHarness(() => ({ text: 'ok' }), { patch: [row('a_b'), row('a.b'), row('solo'), row('solo__x')] });
    await h.session.run('go');
    const reports = new Map(of(h, 'mcp/server').map((r) => [r.server, r]));
    expect(reports.get('mcp:a_b')).toMatchObject({ outcome: 'started' });
    expect(reports.get('mcp:a.b')).toMatchObject({
      outcome: 'failed',
      code: 'MCP_NAME_TAKEN',
      message: 'the MCP server mcp:a.b is refused: its tools would be named mcp__a_b__*, which are the tool names of mcp:a_b (mcp__a_b__*); rename one of the two rows',
    });
    // A prefix inside another's: mcp:solo's tool "x__echo" would be mcp:solo__x's "echo".
    expect(reports.get('mcp:solo')).toMatchObject({ outcome: 'started' });
    expect(reports.get('mcp:solo__x')).toMatchObject({ outcome: 'failed', code: 'MCP_NAME_TAKEN', message: expect.stringContaining('overlap the tool names of mcp:solo (mcp__solo__*)') });
    expect(h.session.host.status().find((s) => s.id === 'mcp:a.b')).toMatchObject({ state: 'failed' });
    const names = requestTools(h, 0);
    expect(names).toContain('mcp__a_b__echo');
    expect(names.filter((n) => n === 'mcp__a_b__echo')).toHaveLength(1);
  });

  it('a server that crashes mid-call: a call-linked MCP_SERVER_EXITED, later calls fail at once, the turn completes; the log verifies and replays', async () => {
    h = createHarness(script([{ name: 'mcp__fx__crash', arguments: {} }], [{ name: 'mcp__fx__echo', arguments: { text: 'anyone?' } }, { name: 'read_file', arguments: { path: 'nope.txt' } }]), { patch: [row('fx')] });
    const out = await h.session.run('go');
    expect(out.reason).toBe('completed');
    const crash = resultOf(h, 'mcp__fx__crash')!;
    expect(crash).toMatchObject({ status: 'error', code: 'MCP_SERVER_EXITED' });
    expect(crash.content).toContain('fixture: crashing on purpose');
    expect(of(h, 'tool/call').find((c) => c.name === 'mcp__fx__crash')!.callId).toBe(crash.callId);
    expect(resultOf(h, 'mcp__fx__echo')).toMatchObject({ status: 'error', code: 'MCP_SERVER_EXITED' });
    expect(resultOf(h, 'read_file')).toMatchObject({ status: 'error' });
    expect(verifyLog(h.entries()).violations).toEqual([]);
    expect(await replayMachines(h.entries())).toEqual({ identical: true });
  });

  it('parallel read-only MCP calls replay through the machines: their class comes from the mcp/server entry', async () => {
    h = createHarness(script([{ name: 'mcp__fx__slow', arguments: { ms: 150 } }, { name: 'mcp__fx__echo', arguments: { text: 'fast' } }, { name: 'mcp__fx__picture', arguments: {} }]), { patch: [trusted('fx')] });
    await h.session.run('go');
    const kinds = h.entries().filter((e) => e.kind === 'tool/dispatch' || e.kind === 'tool/result').map((e) => `${e.kind} ${(e as { name: string }).name}`);
    // The slow one was dispatched alongside the others and finished last.
    expect(kinds.slice(0, 3).every((k) => k.startsWith('tool/dispatch'))).toBe(true);
    expect(kinds.at(-1)).toBe('tool/result mcp__fx__slow');
    expect(await replayMachines(h.entries())).toEqual({ identical: true });
    // Without the entry, replay knows the tools only by their logged specs, not their class: the calls run one after
    // another, and replay says where the log differs.
    const without = h.entries().filter((e) => e.kind !== 'mcp/server');
    expect((await replayMachines(without)).identical).not.toBe(true);
  });

  it('a server that fails to start is one warning and no tools; the session runs its turn', async () => {
    h = createHarness(script([{ name: 'mcp__broken__echo', arguments: { text: 'x' } }]), { patch: [row('broken', '--exit-at-start'), row('fx')] });
    const out = await h.session.run('go');
    expect(out.reason).toBe('completed');
    const reports = of(h, 'mcp/server');
    expect(reports.map((r) => [r.server, r.outcome])).toEqual(expect.arrayContaining([['mcp:broken', 'failed'], ['mcp:fx', 'started']]));
    expect(reports.find((r) => r.server === 'mcp:broken')).toMatchObject({ code: 'MCP_START_FAILED', tools: [], message: expect.stringContaining('fixture: refusing to start') });
    expect(requestTools(h, 0).some((n) => n.startsWith('mcp__broken__'))).toBe(false);
    expect(resultOf(h, 'mcp__broken__echo')).toMatchObject({ status: 'rejected', code: 'UNKNOWN_TOOL' });
    expect(h.session.host.status().find((s) => s.id === 'mcp:broken')).toMatchObject({ state: 'failed' });
    expect(verifyLog(h.entries()).violations).toEqual([]);
    expect(await replayMachines(h.entries())).toEqual({ identical: true });
  });

  it('the server starts with the session and stops with it; its tools go away with the row', async () => {
    const marker = `marker-${Math.random().toString(36).slice(2)}`;
    h = createHarness(() => ({ text: 'ok' }), { patch: [row('fx', marker)] });
    await h.session.ready();
    expect(running(marker)).toBe(true);
    const tools = h.session.host.get(TOOLS);
    expect(tools.get('mcp__fx__echo')).toBeDefined();
    await h.session.close();
    expect(running(marker)).toBe(false);
    expect(tools.list().some((t) => t.name.startsWith('mcp__'))).toBe(false);
    h.cleanup();
    h = undefined;
  });

  it('a session closed while its server starts stops the server and logs nothing more', async () => {
    const marker = `marker-${Math.random().toString(36).slice(2)}`;
    h = createHarness(() => ({ text: 'ok' }), { patch: [row('fx', '--start-delay', '300', marker)] });
    await new Promise((r) => setTimeout(r, 100));
    expect(running(marker)).toBe(true);
    const before = h.entries().length;
    await h.session.close();
    expect(running(marker)).toBe(false);
    await new Promise((r) => setTimeout(r, 300));
    expect(h.entries().length).toBe(before);
    h.cleanup();
    h = undefined;
  });

  it('a server that announces a changed tool list (notifications/tools/list_changed) has it offered from a later step, logged as relisted; the log verifies (issue 23)', async () => {
    h = createHarness(script([{ name: 'mcp__fx__grow', arguments: {} }], [{ name: 'mcp__fx__slow', arguments: { ms: 1500 } }], [{ name: 'mcp__fx__grown', arguments: {} }]), { patch: [trusted('fx')] });
    const out = await h.session.run('go');
    expect(out.reason).toBe('completed');
    expect(requestTools(h, 0)).not.toContain('mcp__fx__grown');
    expect(requestTools(h, 2)).toContain('mcp__fx__grown');
    expect(resultOf(h, 'mcp__fx__grown')).toMatchObject({ status: 'ok', content: 'grown here' });
    const relisted = of(h, 'mcp/server').filter((e) => e.outcome === 'relisted');
    expect(relisted).toHaveLength(1);
    expect(relisted[0]!.tools).toContainEqual({ name: 'mcp__fx__grown', readOnly: true, idempotent: true });
    const seqOf = (kind: string, name: string) => h!.entries().find((e) => e.kind === kind && (e as { name?: string }).name === name)!.seq;
    expect(relisted[0]!.seq).toBeGreaterThan(seqOf('tool/result', 'mcp__fx__grow'));
    expect(verifyLog(h.entries()).violations).toEqual([]);
    // Replay through the machines takes one tool set for a whole log: a log whose list changed says so, by name (left: ADR 0054).
    expect(await replayMachines(h.entries())).toMatchObject({ identical: false, notReplayable: expect.stringContaining('not in the log: mcp__fx__grown') });
  });
});
