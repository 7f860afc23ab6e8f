/**
 * The session the cache figures are measured on (issue 21, "Measure"): three turns, 40 steps in all, each
 * tool step reading a file of about a kilobyte, a context window small enough that compaction runs, every
 * request sent through one wire's real provider and SDK (`wire-fake.ts`). What it returns is the bodies
 * sent, each marked as a summary request or not and by the compaction it follows, so a test can hold the
 * rules and a script can print the share.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createScriptedProviderFromFunction } from '../../adapters/model/scripted.js';
import { isSummaryInstruction } from '../../log/context/summary-prompt.js';
import { createHarness } from './harness.js';
import { wireModel, type Wire } from './wire-fake.js';
import { extendsPrefix, wireParts, type WireParts } from './wire-prefix.js';

export const TURN_STEPS = [14, 13, 13] as const;
const SUMMARY = '## Request and intent\nread the notes\n## Key facts\nthe notes are long\n## Files touched\nnone\n## Errors and fixes\nnone\n## Current work\nreading\n## Next step\nread on';

export interface SentRequest {
  parts: WireParts;
  /** A compaction's summary request. */
  summary: boolean;
  /** How many compactions had replaced messages before this request went out. */
  epoch: number;
}

export interface CacheRun {
  requests: SentRequest[];
  compactions: number;
  steps: number;
}

/** Contract: runs the whole session, cleans up after itself, rejects only if the session does not complete its three turns. */
export async function runCacheSession(wire: Wire, o: { window?: number } = {}): Promise<CacheRun> {
  let step = 0;
  const inner = createScriptedProviderFromFunction((req) => {
    // Usage as a provider would report it, about a token per four characters: the meter reads it to decide on compaction.
    const inputTokens = Math.ceil((req.system.length + JSON.stringify(req.tools).length + JSON.stringify(req.messages).length) / 4);
    if (isSummaryInstruction(req.messages.at(-1))) return { text: SUMMARY, usage: { inputTokens, outputTokens: 60 } };
    const inTurn = step++;
    const turnEnd = TURN_STEPS.slice(0, 1 + TURN_STEPS.findIndex((_, t) => inTurn < TURN_STEPS.slice(0, t + 1).reduce((a, b) => a + b, 0))).reduce((a, b) => a + b, 0) - 1;
    return inTurn === turnEnd ? { text: `Read up to note ${inTurn}.`, usage: { inputTokens, outputTokens: 8 } } : { text: inTurn % 4 === 0 ? 'Reading on.' : '', toolCalls: [{ name: 'read_file', arguments: { path: `note-${inTurn % 8}.txt` } }], usage: { inputTokens, outputTokens: 12 } };
  });
  const w = wireModel(wire, inner);
  const h = createHarness(w.model, { maxSteps: 20, contextWindow: o.window ?? 6000, repeatCall: false });
  try {
    for (let n = 0; n < 8; n++) fs.writeFileSync(path.join(h.workspace, `note-${n}.txt`), `Note ${n}.\n${'the quick brown fox jumps over the lazy dog; '.repeat(24)}\n`);
    const kinds: { summary: boolean; epoch: number }[] = [];
    let epoch = 0;
    const off = h.session.recorder.onEntry((e) => {
      if (e.kind === 'compaction/end' && e.outcome === 'compacted') epoch++;
    });
    const seen = { n: 0 };
    const noteRequests = () => {
      for (; seen.n < h.requests.length; seen.n++) kinds.push({ summary: isSummaryInstruction(h.requests[seen.n]!.request.messages.at(-1)), epoch });
    };
    const offReq = h.session.recorder.onEntry(noteRequests);
    for (const [t, steps] of TURN_STEPS.entries()) {
      const out = await h.session.run(`Turn ${t + 1}: read the notes, ${steps} steps.`);
      if (out.reason !== 'completed') throw new Error(`turn ${t + 1} ended ${out.reason}`);
    }
    noteRequests();
    off();
    offReq();
    const compactions = h.entries().filter((e) => e.kind === 'compaction/end' && e.outcome === 'compacted').length;
    return { requests: w.bodies.map((b, i) => ({ parts: wireParts(wire, b), ...kinds[i]! })), compactions, steps: step };
  } finally {
    await h.session.close();
    h.cleanup();
  }
}

/** Of the consecutive pairs of requests, how many have the later extend the earlier (same head, conversation appended). */
export function extensionShare(requests: readonly SentRequest[]): { extending: number; pairs: number; share: number } {
  let extending = 0;
  for (let i = 1; i < requests.length; i++) {
    const [a, b] = [requests[i - 1]!.parts, requests[i]!.parts];
    if (a.head === b.head && extendsPrefix(a.conversation, b.conversation)) extending++;
  }
  const pairs = Math.max(0, requests.length - 1);
  return { extending, pairs, share: pairs ? extending / pairs : 1 };
}
