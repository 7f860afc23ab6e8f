/**
 * A render intent as ACP tool-call content (ADR 0067). `generic` is the
 * result's text; `diff` is that text and ACP's own `diff` content, when the
 * change landed; `search` is the text and a location for each file hit (inside
 * the workspace only, as every location bridle sends); `terminal` is the
 * command and its output as a fenced block. ACP's `terminal` content embeds a
 * terminal the client made (`terminal/create`) and bridle runs commands in its
 * own sandbox, so there is no terminal to name: the block says it in text.
 */
import path from 'node:path';
import type { ToolCallContent, ToolCallLocation } from '@agentclientprotocol/sdk';
import type { RenderIntent } from '../../ports/present.js';

/** At most this many locations for a search's hits: a client follows them, and 500 tabs help no one. */
export const ACP_SEARCH_LOCATIONS = 50;

const text = (t: string, meta?: Record<string, unknown>): ToolCallContent => ({ type: 'content', content: { type: 'text', text: t }, ...(meta ? { _meta: { bridle: meta } } : {}) });

const isInside = (root: string, p: string) => {
  const rel = path.relative(root, p);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
};

/** A fence longer than any run of backticks in the text, so the block cannot be closed from inside it. */
function fenced(body: string): string {
  const longest = Math.max(2, ...[...body.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(longest + 1);
  return `${fence}console\n${body}\n${fence}`;
}

function searchLocations(intent: Extract<RenderIntent, { kind: 'search' }>, cwd: string): ToolCallLocation[] {
  const root = path.resolve(cwd);
  const out: ToolCallLocation[] = [];
  const seen = new Set<string>();
  for (const m of intent.matches) {
    if (out.length >= ACP_SEARCH_LOCATIONS) break;
    if (m.path === '' || m.path.includes('\0')) continue;
    const at = path.resolve(root, m.path);
    const key = `${at}:${m.line ?? ''}`;
    if (!isInside(root, at) || seen.has(key)) continue;
    seen.add(key);
    out.push(m.line === undefined ? { path: at } : { path: at, line: m.line });
  }
  return out;
}

/**
 * Contract: pure, never throws. The content (and for a search, the locations)
 * of a finished call's `tool_call_update`, from its intent and its result's text.
 */
export function intentContent(intent: RenderIntent, resultText: string, cwd: string): { content: ToolCallContent[]; locations?: ToolCallLocation[] } {
  switch (intent.kind) {
    case 'generic':
      return { content: [text(intent.text)] };
    case 'terminal': {
      const exit = intent.exitCode === null ? 'no exit code' : `exit code ${intent.exitCode}`;
      const body = `$ ${intent.command}\n${intent.output}`.replace(/\n$/, '');
      return { content: [text(`${fenced(body)}\n${exit}`, { intent: 'terminal', exitCode: intent.exitCode })] };
    }
    case 'diff': {
      if (intent.status !== 'ok') return { content: [text(resultText)] };
      const at = path.resolve(cwd, intent.path);
      const diff: ToolCallContent = intent.oldText === null ? { type: 'diff', path: at, newText: intent.newText } : { type: 'diff', path: at, oldText: intent.oldText, newText: intent.newText };
      return { content: [text(resultText), diff] };
    }
    case 'search':
      return { content: [text(resultText)], locations: searchLocations(intent, cwd) };
    case 'plan':
      // The steps go as the session's `plan` update (`updates.ts`), which a client shows as the plan; the call says it was set.
      return { content: [text(resultText)] };
  }
}
