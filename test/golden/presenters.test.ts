/**
 * Chapter 4's advanced exercise: presenters are pure functions of logged data,
 * so two replays of one log render identical bytes. Each golden log is drawn
 * twice by the CLI's transcript and twice by the viewer's intent renderer
 * (each from a fresh renderer); then each intent kind on each surface.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { intentText } from '../../cli/present-text.js';
import { createRenderer } from '../../cli/render.js';
import type { Entry } from '../../log/entries.js';
import { parseLog } from '../../log/parse.js';
import type { RenderIntent } from '../../ports/present.js';
import type { ToolDefinition } from '../../ports/tools.js';
import { entryUpdates, type FeedState } from '../../server/acp/updates.js';
import { builtinTools } from '../../tools/index.js';
import { resultIntents } from '../../visualizations/replay-html.js';
import { viewerRenderer } from '../helpers/viewer-intents.js';

const dir = new URL('.', import.meta.url).pathname;
const logs = readdirSync(dir).filter((f) => f.endsWith('.jsonl'));
const entriesOf = (f: string): Entry[] => parseLog(readFileSync(join(dir, f), 'utf8')).entries;
/** A fresh lookup each time: nothing a replay leaves behind reaches the next. */
const freshTools = () => new Map<string, ToolDefinition>(builtinTools().map((t) => [t.name, t]));

function cliReplay(entries: readonly Entry[]): string {
  let out = '';
  const r = createRenderer({ write: (s: string) => (out += s) }, freshTools(), { color: true });
  for (const e of entries) r.onEntry(e);
  return out;
}

function viewerReplay(entries: readonly Entry[]): string {
  const draw = viewerRenderer();
  const intents = resultIntents(entries, freshTools());
  return Object.entries(intents).map(([id, intent]) => `${id}\n${draw(intent)}\n`).join('');
}

describe('two replays of one log render identical bytes', () => {
  it.each(logs)('%s: the CLI transcript and the viewer draw the same twice', (f) => {
    const entries = entriesOf(f);
    const [cliA, cliB] = [cliReplay(entries), cliReplay(entriesOf(f))];
    const [viewA, viewB] = [viewerReplay(entries), viewerReplay(entriesOf(f))];
    expect(Buffer.from(cliB).equals(Buffer.from(cliA))).toBe(true);
    expect(Buffer.from(viewB).equals(Buffer.from(viewA))).toBe(true);
    expect(cliA).toContain('←');
  });

  it('the golden logs hold every non-generic kind, and each is drawn', () => {
    const all = logs.flatMap((f) => Object.values(resultIntents(entriesOf(f), freshTools())));
    for (const kind of ['terminal', 'diff', 'search'] as const) expect(all.some((i) => i.kind === kind), kind).toBe(true);
    const flaky = entriesOf('flaky-checkout.jsonl');
    expect(cliReplay(flaky)).toContain('\x1b[2m    │ failures: 0/30\x1b[22m');
    expect(viewerReplay(flaky)).toContain('<pre class="intent terminal"><span class="cmd">$ ');
  });
});

const base = { title: 't', status: 'ok' };
const INTENTS: Record<RenderIntent['kind'], RenderIntent> = {
  generic: { kind: 'generic', text: 'plain <b>text</b>', ...base },
  terminal: { kind: 'terminal', command: 'echo ```hi```', exitCode: 2, output: '--- stdout ---\nhi <there>\n', ...base },
  diff: { kind: 'diff', path: 'src/a.ts', oldText: 'x = 1', newText: 'x = 2', lines: [{ op: '-', text: 'x = 1' }, { op: '+', text: 'x = 2' }], ...base },
  plan: { kind: 'plan', entries: [{ content: 'read the <tests>', status: 'completed' }, { content: 'fix the bug', status: 'in_progress', priority: 'high' }, { content: 'run them', status: 'pending', priority: 'medium' }], ...base },
  search: { kind: 'search', query: '/load/ in .', matches: [{ path: 'a.js', line: 12, text: 'load(<x>)' }, { path: '../out.js', line: 1, text: 'x' }], notes: ['[cut]'], ...base },
};

/** ACP's rendering of an intent: a call and its result through the feed, with a tool that presents as `intent`. */
function acpOf(intent: RenderIntent, content: string) {
  return acpUpdatesOf(intent, content)[0] as { content: { type: string; content?: { text: string }; path?: string; oldText?: string; newText?: string }[]; locations?: { path: string; line?: number }[] };
}

function acpUpdatesOf(intent: RenderIntent, content: string) {
  const { kind: _k, title: _t, status: _s, ...body } = intent;
  const tool: ToolDefinition = { ...builtinTools()[0]!, name: 'x', parameters: {}, present: () => 't', presentResult: () => ({ kind: intent.kind, ...body }) as never };
  const s: FeedState = { cwd: '/ws', tools: { get: (n) => (n === 'x' ? tool : undefined) }, calls: new Map() };
  const ids = { seq: 1, at: '2026-01-01T00:00:00.000Z', turn: 't1', step: 't1.s1', callId: 't1.s1.c1', toolCallId: 'c', name: 'x' } as const;
  entryUpdates({ ...ids, kind: 'tool/call', arguments: '{}' } as Entry, s, { kind: 'history' });
  return entryUpdates({ ...ids, kind: 'tool/result', status: 'ok', content, surfaceOp: 'append' } as Entry, s, { kind: 'history' });
}

describe('each intent kind on each surface', () => {
  const draw = viewerRenderer();

  it('generic: the CLI adds nothing to the summary, the viewer nothing to the row, ACP the result text', () => {
    expect(intentText(INTENTS.generic)).toEqual([]);
    expect(draw(INTENTS.generic)).toBe('');
    expect(acpOf(INTENTS.generic, 'plain <b>text</b>').content).toEqual([{ type: 'content', content: { type: 'text', text: 'plain <b>text</b>' } }]);
  });

  it('terminal: the output\'s tail on the CLI, command, output and exit code in the viewer, a fenced block ACP cannot close early', () => {
    expect(intentText(INTENTS.terminal)).toEqual(['    │ hi <there>']);
    expect(draw(INTENTS.terminal)).toBe('<pre class="intent terminal"><span class="cmd">$ echo ```hi```\n</span><span class="out">--- stdout ---\nhi &lt;there&gt;\n</span><span class="exit bad">exit code 2</span></pre>');
    const [block] = acpOf(INTENTS.terminal, 'exit code: 2').content;
    expect(block!.content!.text).toBe('````console\n$ echo ```hi```\n--- stdout ---\nhi <there>\n````\nexit code 2');
  });

  it('diff: changed lines on the CLI, every line marked in the viewer, ACP\'s own diff content', () => {
    expect(intentText(INTENTS.diff)).toEqual(['    src/a.ts', '    - x = 1', '    + x = 2']);
    expect(draw(INTENTS.diff)).toBe('<pre class="intent diff"><span class="path">src/a.ts\n</span><span class="del">- x = 1\n</span><span class="add">+ x = 2</span></pre>');
    expect(acpOf(INTENTS.diff, 'Edited').content).toEqual([{ type: 'content', content: { type: 'text', text: 'Edited' } }, { type: 'diff', path: '/ws/src/a.ts', oldText: 'x = 1', newText: 'x = 2' }]);
  });

  it('search: a count and the hits on the CLI, a list in the viewer, ACP locations inside the workspace only', () => {
    expect(intentText(INTENTS.search)).toEqual(['    2 matches in 2 files for /load/ in .', '    a.js:12: load(<x>)', '    ../out.js:1: x', '    [cut]']);
    expect(draw(INTENTS.search)).toContain('<li class="match"><span class="path">a.js</span><span class="line">:12</span><span class="hit"> load(&lt;x&gt;)</span></li>');
    expect(acpOf(INTENTS.search, 'a.js:12: load(<x>)').locations).toEqual([{ path: '/ws/a.js', line: 12 }]);
  });
  it('plan: a checklist on the CLI and in the viewer, the call\'s text and then ACP\'s plan update, every step with a priority', () => {
    expect(intentText(INTENTS.plan)).toEqual(['    [x] read the <tests>', '    [>] fix the bug (high)', '    [ ] run them']);
    expect(draw(INTENTS.plan)).toBe('<ol class="intent plan"><li class="step completed"><span class="mark">[x] </span><span class="step">read the &lt;tests&gt;</span></li><li class="step in_progress"><span class="mark">[&gt;] </span><span class="step">fix the bug</span><span class="note"> (high)</span></li><li class="step pending"><span class="mark">[ ] </span><span class="step">run them</span></li></ol>');
    expect(acpUpdatesOf(INTENTS.plan, 'Plan updated: 1 of 3 completed.')).toEqual([
      expect.objectContaining({ sessionUpdate: 'tool_call_update', status: 'completed', content: [{ type: 'content', content: { type: 'text', text: 'Plan updated: 1 of 3 completed.' } }] }),
      { sessionUpdate: 'plan', entries: [{ content: 'read the <tests>', status: 'completed', priority: 'medium' }, { content: 'fix the bug', status: 'in_progress', priority: 'high' }, { content: 'run them', status: 'pending', priority: 'medium' }] },
    ]);
  });
});
