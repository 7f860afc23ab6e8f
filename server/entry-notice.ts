/**
 * The `session/entry` notification of one entry; a `tool/result` also
 * carries its render intent (ADR 0067), so the viewer draws a finished call
 * as its tool presents it without running any tool code in the browser.
 */
import type { Entry } from '../log/entries.js';
import { presentResult, type ToolLookup } from '../tools/present.js';
import { notification } from './protocol.js';

type Call = { name: string; arguments: string };

/** Contract: never throws for any entry. Serializes entries as `session/entry`, keeping the calls it has seen until their results. */
export function entryNotices(sessionId: string, tools: () => ToolLookup, earlier: (callId: string) => Call | undefined): (entry: Entry) => string {
  const calls = new Map<string, Call>();
  return (entry) => {
    if (entry.kind === 'tool/call') calls.set(entry.callId, { name: entry.name, arguments: entry.arguments });
    if (entry.kind !== 'tool/result') return JSON.stringify(notification('session/entry', { sessionId, entry }));
    const call = calls.get(entry.callId) ?? earlier(entry.callId);
    calls.delete(entry.callId);
    const intent = call ? presentResult(tools(), call.name, call.arguments, entry) : undefined;
    return JSON.stringify(notification('session/entry', { sessionId, entry, ...(intent ? { intent } : {}) }));
  };
}

/** The call a result answers, looked up from the end of a log (a result is logged soon after its call). */
export function callIn(entries: readonly Entry[], callId: string): Call | undefined {
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i]!;
    if (e.kind === 'tool/call' && e.callId === callId) return { name: e.name, arguments: e.arguments };
  }
  return undefined;
}
