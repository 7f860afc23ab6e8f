/**
 * A finished session as one self-contained HTML file: the live viewer's page,
 * script and styles inlined, with the log and the diagrams embedded as JSON.
 * A slider scrubs through the log; nothing is fetched, so it opens from disk.
 * With `cost` (`bridle cost`'s report of the same logs) the page shows what
 * each step, turn, session and the tree cost. Each finished call's render
 * intent (ADR 0067) is embedded by call id, computed with `tools` (the
 * built-ins unless told): the replayed timeline draws what the live one did.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CostReport } from '../log/cost.js';
import type { Entry } from '../log/entries.js';
import type { RenderIntent } from '../ports/present.js';
import { changeOf, type Change } from '../tools/diff.js';
import { knownToolLookup } from '../tools/index.js';
import { presentResult, type ToolLookup } from '../tools/present.js';
import { viewerDir, visualizationsDir } from './paths.js';

const MACHINES = ['session', 'turn', 'step', 'tool-call'];

/** JSON that is safe inside a <script> element: no `</script>`, no `<!--`. */
const scriptSafe = (json: string) => json.replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');

const parsed = (raw: string): unknown => {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
};

/** The change each asked `edit_file`/`write_file` call makes, by call id: the replayed card shows what the live one did. */
function askedChanges(entries: readonly Entry[]): Record<string, Change> {
  const calls = new Map<string, { name: string; arguments: string }>();
  const out: Record<string, Change> = {};
  for (const e of entries) {
    if (e.kind === 'tool/call') calls.set(e.callId, { name: e.name, arguments: e.arguments });
    if (e.kind === 'approval/asked') {
      const call = calls.get(e.callId);
      const change = call && changeOf(call.name, parsed(call.arguments));
      if (change) out[e.callId] = change;
    }
  }
  return out;
}

/** The render intent of every finished call, by call id. Contract: pure given pure presenters. */
export function resultIntents(entries: readonly Entry[], tools: ToolLookup): Record<string, RenderIntent> {
  const calls = new Map<string, { name: string; arguments: string }>();
  const out: Record<string, RenderIntent> = {};
  for (const e of entries) {
    if (e.kind === 'tool/call') calls.set(e.callId, { name: e.name, arguments: e.arguments });
    if (e.kind === 'tool/result') {
      const call = calls.get(e.callId);
      if (call) out[e.callId] = presentResult(tools, call.name, call.arguments, e);
    }
  }
  return out;
}

/**
 * Contract: pure given the checked-in viewer and diagrams; the entries are
 * embedded as data and shown with textContent, so a log cannot inject markup.
 */
export function renderReplayHtml(entries: readonly Entry[], lineage?: { forkedFrom?: { session: string; seq: number }; forks: readonly { id: string; seq: number }[] }, cost?: CostReport, tools: ToolLookup = knownToolLookup()): string {
  const dir = viewerDir();
  const page = readFileSync(join(dir, 'index.html'), 'utf8');
  const css = readFileSync(join(dir, 'viewer.css'), 'utf8');
  const script = (name: string) => readFileSync(join(dir, name), 'utf8').replace(/<\/script/gi, '<\\/script');
  const js = script('viewer.js');
  const costJs = script('viewer-cost.js');
  const intentsJs = script('viewer-intents.js');
  const diagrams: Record<string, string> = {};
  for (const m of MACHINES) diagrams[m] = readFileSync(join(visualizationsDir(), `${m}.svg`), 'utf8');
  const start = entries.find((e) => e.kind === 'session/start');
  const sessionId = start?.kind === 'session/start' ? start.id : '';
  const data = scriptSafe(JSON.stringify({ sessionId, entries, diagrams, changes: askedChanges(entries), intents: resultIntents(entries, tools), ...(lineage ? { lineage: { ...(lineage.forkedFrom ? { forkedFrom: lineage.forkedFrom } : {}), forks: lineage.forks.map((f) => ({ id: f.id, seq: f.seq })) } } : {}), ...(cost ? { cost } : {}) }));
  const title = `bridle · replay · ${sessionId.replace(/[<>&"]/g, '')}`;
  return page
    .replace(/<title>[^<]*<\/title>/, () => `<title>${title}</title>`)
    .replace('<link rel="stylesheet" href="viewer.css">', () => `<style>\n${css}</style>`)
    .replace('<script src="viewer-cost.js"></script>', () => `<script>\n${costJs}</script>`)
    .replace('<script src="viewer-intents.js"></script>', () => `<script>\n${intentsJs}</script>`)
    .replace('<script src="viewer.js"></script>', () => `<script type="application/json" id="bridle-data">${data}</script>\n<script>\n${js}</script>`);
}
