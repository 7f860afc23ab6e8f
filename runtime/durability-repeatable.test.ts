/**
 * Only the flushes a step needs (ADR 0072): a read-only, idempotent call runs
 * before its dispatch is flushed, and its dispatch and result ride the next
 * flush something else needs; a call that may not run twice still has its
 * dispatch durable before its body. A crash in between leaves a log that
 * repair closes and that verifies.
 */
import * as nodeFs from 'node:fs';
import { realpathSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createJsonlStore, type JsonlFs } from '../adapters/store/jsonl.js';
import { createMemoryStore, type MemoryStore } from '../adapters/store/memory.js';
import { noopOnceTool, noopTool } from '../bench/noop-tool.js';
import { benchSession } from '../bench/session.js';
import type { Entry } from '../log/entries.js';
import { parseLog } from '../log/parse.js';
import { Recorder } from '../log/recorder.js';
import { planRepair } from '../log/repair.js';
import { verifyLog } from '../log/verify.js';
import { checkCheckpoints } from '../machines/session-fold.js';
import type { ToolDefinition, ToolOutput } from '../ports/tools.js';
import { bridleTools, type McpToolInfo } from '../adapters/mcp/tools.js';
import { createHarness, type Harness } from '../test/helpers/harness.js';
import { builtinTools } from '../tools/index.js';
import { tempDir } from '../test/helpers/temp.js';

let h: Harness | undefined;
afterEach(() => {
  h?.session.actor.stop();
  h?.cleanup();
  h = undefined;
});

/** A memory store that must be flushed: it counts its flushes and how many lines the last one made durable. */
function flushedStore(): MemoryStore & { flushes: number; durable: number } {
  const inner = createMemoryStore();
  const s = Object.assign(Object.create(inner) as MemoryStore, { flushes: 0, durable: 0 }) as MemoryStore & { flushes: number; durable: number };
  s.flush = async () => {
    s.flushes++;
    s.durable = inner.lines.length;
  };
  return s;
}

const tool = (name: string, readOnly: boolean, idempotent: boolean, body: () => void = () => {}): ToolDefinition => ({
  name,
  description: name,
  parameters: z.strictObject({ n: z.number().optional() }),
  readOnly,
  idempotent,
  present: () => name,
  execute: async (): Promise<ToolOutput> => (body(), { status: 'ok', content: `${name} ran` }),
});

/** The fdatasyncs of one turn on a JSONL store: `calls` per step for five steps of `name`, then an answer (`calls` 0: just the answer). */
async function syncsOfATurn(name: string, calls: number, inOneStep = false): Promise<number> {
  const dir = realpathSync(tempDir('bridle-repeatable-'));
  let syncs = 0;
  // Counted, not done: what is measured is how many the machines ask for, and the test stays quick.
  const fs: JsonlFs = { ...nodeFs, fdatasync: (_fd, done) => (syncs++, setImmediate(() => done(null))), fsync: (_fd, done) => setImmediate(() => done(null)) };
  const steps = calls === 0 ? 0 : inOneStep ? 1 : 5;
  const perStep = inOneStep ? 5 : calls;
  const session = benchSession({
    id: 's',
    respond: (_r, i) => (i < steps ? { toolCalls: Array.from({ length: perStep }, (_, c) => ({ name, arguments: { n: i * 10 + c } })) } : { text: 'done' }),
    store: createJsonlStore(join(dir, 's.jsonl'), { fs }),
    tools: [noopTool, noopOnceTool],
  });
  const out = await session.run('go');
  await session.close();
  rmSync(dir, { recursive: true, force: true });
  expect(out.reason).toBe('completed');
  return syncs;
}

describe('only the flushes a step needs (ADR 0072)', () => {
  it('a turn of five read-only calls costs no fsync beyond the turn that made none; five that may not run twice cost two each', async () => {
    const bare = await syncsOfATurn('noop', 0);
    const fiveSteps = await syncsOfATurn('noop', 1);
    const oneStep = await syncsOfATurn('noop', 5, true);
    const writes = await syncsOfATurn('noop_once', 1);
    // Before ADR 0072 each read-only call flushed at its dispatch and at its result, like a write: bare + 10.
    expect({ fiveSteps, oneStep }).toEqual({ fiveSteps: bare, oneStep: bare });
    expect(writes).toBe(bare + 10);
  });

  it("a call that may not run twice has its dispatch durable before its body, and that flush carries the read-only calls before it", async () => {
    const store = flushedStore();
    let durableAtPoke = -1;
    const peek = tool('peek', true, true);
    const poke = tool('poke', false, false, () => (durableAtPoke = store.durable));
    h = createHarness((_r, i) => (i === 0 ? { toolCalls: [{ name: 'peek' }, { name: 'peek' }, { name: 'poke' }] } : { text: 'done' }), { store, tools: [peek, poke] });
    expect(await h.session.run('go')).toMatchObject({ reason: 'completed' });
    const lineOf = (kind: string, callId: string) => store.lines.findIndex((l) => l.includes(`"kind":"${kind}"`) && l.includes(`"callId":"${callId}"`)) + 1;
    expect(durableAtPoke).toBeGreaterThanOrEqual(lineOf('tool/dispatch', 't1.s1.c3'));
    expect(durableAtPoke).toBeGreaterThan(lineOf('tool/result', 't1.s1.c2'));
    expect(verifyLog(h.entries(), { checkpoints: checkCheckpoints }).violations).toEqual([]);
  });
});

/** One tool of an MCP server, as `adapters/mcp/tools.ts` makes it from what `tools/list` says. */
function mcpTool(annotations: McpToolInfo['annotations'], trusted: boolean): ToolDefinition {
  const info: McpToolInfo = { name: 'lookup', inputSchema: { type: 'object' }, ...(annotations ? { annotations } : {}) };
  return bridleTools('mcp:srv', [info], async () => ({ status: 'ok', content: 'looked up' }), 5_000, { trusted }).tools[0]!;
}

const builtin = (name: string) => builtinTools().find((t) => t.name === name)!;

/** [what, the tool, its arguments, whether its dispatch must be durable before its body]. */
const classes: [string, ToolDefinition, Record<string, unknown>, boolean][] = [
  ['write_file (idempotent, not read-only)', builtin('write_file'), { path: 'a.txt', content: 'x' }, true],
  ['edit_file', builtin('edit_file'), { path: 'a.txt', old_text: 'a', new_text: 'b' }, true],
  ['bash', builtin('bash'), { command: 'true' }, true],
  ['an MCP tool without annotations', mcpTool(undefined, false), {}, true],
  ['an MCP tool whose readOnlyHint its row does not trust (idempotent, not read-only)', mcpTool({ readOnlyHint: true }, false), {}, true],
  ['an MCP tool of a trusted row with only idempotentHint', mcpTool({ idempotentHint: true }, true), {}, true],
  ['a read-only tool that may not run twice (as delegate is)', tool('once', true, false), {}, true],
  ['a tool that is neither', tool('neither', false, false), {}, true],
  ['read_file', builtin('read_file'), { path: 'a.txt' }, false],
  ['grep', builtin('grep'), { pattern: 'a' }, false],
  ['glob', builtin('glob'), { pattern: '*.txt' }, false],
  ['list_dir', builtin('list_dir'), {}, false],
  ['an MCP tool of a trusted row with readOnlyHint (read-only and idempotent)', mcpTool({ readOnlyHint: true }, true), {}, false],
];

describe('every call not marked both read-only and idempotent keeps its dispatch durable before its body (ADR 0072)', () => {
  it.each(classes)('%s', async (_what, t, args, mustFlush) => {
    const store = flushedStore();
    let durableAtBody = -1;
    const watched: ToolDefinition = { ...t, execute: (a, ctx) => ((durableAtBody = store.durable), t.execute(a, ctx)) };
    h = createHarness((_r, i) => (i === 0 ? { toolCalls: [{ name: t.name, arguments: args }] } : { text: 'done' }), { store, tools: [watched] });
    nodeFs.writeFileSync(join(h.workspace, 'a.txt'), 'a\n');
    expect(await h.session.run('go')).toMatchObject({ reason: 'completed' });
    const dispatchLine = store.lines.findIndex((l) => l.includes('"kind":"tool/dispatch"')) + 1;
    expect(dispatchLine).toBeGreaterThan(0);
    expect(durableAtBody).toBeGreaterThanOrEqual(0);
    expect({ durableBeforeBody: durableAtBody >= dispatchLine }).toEqual({ durableBeforeBody: mustFlush });
  });
});

/** Closes what a crash left open the way `bridle resume` does, and returns the log it leaves. */
function repaired(lines: readonly string[]): { entries: Entry[]; report: Extract<ReturnType<typeof planRepair>, { ok: true }>['report'] } {
  const survived = parseLog(lines.map((l) => `${l}\n`).join('')).entries;
  const plan = planRepair(survived);
  if (!plan.ok) throw new Error(`not repairable: ${JSON.stringify(plan.violations)}`);
  const rec = new Recorder(createMemoryStore(), () => Date.UTC(2026, 1, 1), survived);
  for (const d of plan.drafts) rec.append(d);
  return { entries: rec.entries, report: plan.report };
}

describe('a crash after a read-only body, before anything flushed it', () => {
  it('what the disk kept lacks its dispatch and what the file held has it: repair marks it (idempotent) or nothing of it is left, and the call runs again; both logs verify', async () => {
    const store = flushedStore();
    let written: string[] = [];
    let durable: string[] = [];
    let runs = 0;
    const peek = tool('peek', true, true, () => {
      runs++;
      // The crash, at the end of the body: the file holds every line written (a killed process), the disk only the flushed ones (a power cut).
      if (runs === 1) {
        written = store.lines.slice();
        durable = store.lines.slice(0, store.durable);
      }
    });
    h = createHarness((_r, i) => (i === 0 ? { toolCalls: [{ name: 'peek' }] } : { text: 'done' }), { store, tools: [peek] });
    await h.session.run('look');
    h.session.actor.stop();
    const dispatched = (ls: readonly string[]) => ls.some((l) => l.includes('"kind":"tool/dispatch"'));
    expect(dispatched(written)).toBe(true);
    // Before ADR 0072 the dispatch was flushed before the body ran.
    expect(dispatched(durable)).toBe(false);

    const killed = repaired(written);
    expect(killed.report.outcomeUnknown).toEqual([{ callId: 't1.s1.c1', name: 'peek', idempotent: true }]);
    expect(verifyLog(killed.entries, { checkpoints: checkCheckpoints }).violations).toEqual([]);

    const cut = repaired(durable);
    expect(verifyLog(cut.entries, { checkpoints: checkCheckpoints }).violations).toEqual([]);
    expect(cut.entries.some((e) => e.kind === 'tool/dispatch')).toBe(false);
    // Resumed from what the disk kept, the model asks again and the read-only call runs again: harmless by its class.
    h.cleanup();
    h = createHarness((_r, i) => (i === 0 ? { toolCalls: [{ name: 'peek' }] } : { text: 'done' }), { tools: [peek], existing: cut.entries });
    expect(await h.session.run('look again', 'resume')).toMatchObject({ reason: 'completed' });
    expect(runs).toBe(2);
    expect(verifyLog(h.entries(), { checkpoints: checkCheckpoints }).violations).toEqual([]);
  });
});
