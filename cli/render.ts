/**
 * The human transcript of a session: live text as it streams, each tool call
 * rendered by its presenter, a short result (and under it, the result's render
 * intent as text: ADR 0067), retries and the turn's end.
 * Everything in it but the renderer's own dim codes passes through `visible`:
 * text, names, arguments and results come from the model, a tool or a provider.
 */
import type { Chunk } from '../log/chunks.js';
import type { Entry } from '../log/entries.js';
import { shortId } from '../log/ids.js';
import { knownToolLookup } from '../tools/index.js';
import { presentCall, presentResult, type ToolLookup } from '../tools/present.js';
import { intentText } from './present-text.js';
import { visible } from './visible.js';

export interface Renderer {
  onChunk(chunk: Chunk, step: string): void;
  onEntry(entry: Entry): void;
}

const dim = (s: string, color: boolean) => (color ? `\x1b[2m${s}\x1b[22m` : s);

let builtins: ToolLookup | undefined;
/** A call as bridle's built-in tools present it (`approval/request.presented` on a worker that relays the session); any other as `name arguments`. */
export const presentBuiltin = (name: string, args: string): string => presentCall((builtins ??= knownToolLookup()), name, args);

/** The first and, when different, the last non-empty line: a command's exit code and its verdict both show. */
export function summarizeResult(content: string, max = 80): string {
  const lines = content.split('\n');
  const nonEmpty = lines.filter((l) => l.trim());
  const clip = (s: string) => (s.length > max ? `${s.slice(0, max)}…` : s);
  const first = clip(nonEmpty[0] ?? '');
  const last = nonEmpty.length > 1 ? clip(nonEmpty[nonEmpty.length - 1]!.trim()) : '';
  return `${first}${last ? ` … ${last}` : ''}${lines.length > 1 ? ` (${lines.length} lines)` : ''}`;
}

/**
 * What an `mcp/server` entry tells the person at the terminal (stderr): a
 * server that did not start, or tools it left out, as warnings; one that
 * started, as one line. Contract: pure; shown as `visible` shows it.
 */
export function mcpNotes(e: Entry): string[] {
  if (e.kind !== 'mcp/server') return [];
  if (e.outcome === 'failed') return [visible(`bridle: warning: ${e.message ?? `the MCP server ${e.server} did not start`} (${e.code ?? 'MCP_START_FAILED'}); its tools are not offered`)];
  const readOnly = e.tools.filter((t) => t.readOnly).length;
  return [visible(`mcp: ${e.server}: ${e.outcome === 'relisted' ? 'tools re-listed: ' : ''}${e.tools.length} tools (${readOnly} read-only)`), ...e.problems.map((p) => visible(`bridle: warning: ${e.server}: ${p}`))];
}

/** A `skills/found` entry's warnings, one line each on stderr (ADR 0064); the skills it lists say nothing. Contract: pure. */
export function skillNotes(e: Entry): string[] {
  if (e.kind !== 'skills/found') return [];
  const outcome = (code: string) => (code.startsWith('SKILLS_') ? '' : code === 'SKILL_FIELD_UNKNOWN' ? '; the skill is still listed' : '; the skill is skipped');
  return e.warnings.map((w) => visible(`bridle: warning: ${w.message} (${w.code})${outcome(w.code)}`));
}

export function createRenderer(out: { write(s: string): unknown }, tools: ToolLookup, opts: { color?: boolean; scriptedLabel?: string } = {}): Renderer {
  const color = opts.color ?? false;
  let atLineStart = true;
  let inReasoning = false;
  /** The calls seen, by id: a result's intent reads its call's arguments. */
  const calls = new Map<string, { name: string; arguments: string }>();
  const write = (s: string) => {
    if (!s) return;
    out.write(s);
    atLineStart = s.endsWith('\n');
  };
  /** One line of the transcript, shown as `visible` shows it, dimmed when asked. */
  const line = (s: string, dimmed = false) => {
    if (!atLineStart) write('\n');
    const shown = visible(s);
    write(`${dimmed ? dim(shown, color) : shown}\n`);
  };
  return {
    onChunk(chunk) {
      if (chunk.type === 'block-start' && chunk.block.type !== 'tool-call') {
        inReasoning = chunk.block.type === 'reasoning';
        if (!atLineStart) write('\n');
        if (opts.scriptedLabel && !inReasoning) write(dim('[scripted] ', color));
        if (inReasoning) write(dim('thinking: ', color));
      } else if (chunk.type === 'text-delta') write(visible(chunk.text, 'text'));
      else if (chunk.type === 'reasoning-delta') write(dim(visible(chunk.text, 'text'), color));
      else if (chunk.type === 'block-end' && !atLineStart) write('\n');
    },
    onEntry(e) {
      switch (e.kind) {
        case 'tool/call':
          calls.set(e.callId, { name: e.name, arguments: e.arguments });
          line(`→ ${presentCall(tools, e.name, e.arguments)}`);
          break;
        case 'tool/result': {
          line(`  ← ${shortId(e.callId)} ${e.status}${e.code ? ` ${e.code}` : ''}: ${summarizeResult(e.content)}`, true);
          const call = calls.get(e.callId);
          calls.delete(e.callId);
          if (call) for (const l of intentText(presentResult(tools, call.name, call.arguments, e))) line(l, true);
          break;
        }
        case 'model/retry':
          line(`  ↻ model request failed (${e.code}: ${e.message}); retry ${e.attempt} in ${e.delayMs} ms`, true);
          break;
        case 'approval/decided':
          line(`  approval for ${e.callId}: ${e.outcome} (${e.by})`, true);
          break;
        case 'compaction/end':
          line(`  ⟲ context compaction ${e.outcome}: ~${e.tokensBefore} → ~${e.tokensAfter} tokens`, true);
          break;
        case 'turn/end':
          line(`turn ${e.turn} ended: ${e.reason}${e.code ? ` (${e.code})` : ''}${e.cause ? ` — ${e.cause}` : ''}, ${e.steps} step${e.steps === 1 ? '' : 's'}`);
          break;
      }
    },
  };
}
