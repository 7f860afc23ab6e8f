/**
 * The golden sessions on every provider (issue 21 item 5): scripted sessions like the recorded ones here —
 * the schedule's four calls in one answer (two reads together, a write, a read after it), reasoning before
 * tool calls, a rate limit retried after the server's `retry-after`, an answer cut by its length — run
 * through `openai-chat`, `openai-responses` and `anthropic` (the real provider and SDK, the answers
 * streamed back by an in-process fake of each wire, test/helpers/wire-fake.ts). Each log must replay
 * through the machines byte for byte, and be the log the same script writes with no wire at all, but for
 * what only a wire has: its payloads (a reasoning item, a thinking signature), the words of its errors.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createScriptedProviderFromFunction } from '../../adapters/model/scripted.js';
import type { ScriptedResponse } from '../../adapters/model/scripted-script.js';
import type { Entry } from '../../log/entries.js';
import type { ModelProvider } from '../../ports/model.js';
import { replayThroughMachines } from '../../replay/replay.js';
import { builtinTools } from '../../tools/index.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { WIRES, wireModel, type Wire } from '../helpers/wire-fake.js';

const SCRIPT: ScriptedResponse[] = [
  {
    reasoning: 'The prices and the cart first; the total after both.',
    text: 'Reading the prices and the cart together, then writing the total and reading it back.',
    toolCalls: [
      { name: 'read_file', arguments: { path: 'prices.txt' } },
      { name: 'read_file', arguments: { path: 'cart.txt' } },
      { name: 'write_file', arguments: { path: 'total.txt', content: 'total 1259\n' } },
      { name: 'read_file', arguments: { path: 'total.txt' } },
    ],
    usage: { inputTokens: 420, outputTokens: 60, reasoningTokens: 12, cachedTokens: 0 },
  },
  { error: { code: 'RATE_LIMIT', message: 'slow down', retryAfterMs: 1 } },
  { text: 'The total is 1259 cents, written to total.txt.', usage: { inputTokens: 610, outputTokens: 14, cachedTokens: 400 } },
  { text: 'Listing the folder, then', finish: 'length', usage: { inputTokens: 640, outputTokens: 8 } },
];

let hs: Harness[] = [];
afterEach(() => {
  for (const h of hs) h.cleanup();
  hs = [];
});

async function session(wire: Wire | undefined): Promise<readonly Entry[]> {
  const script = createScriptedProviderFromFunction((_r, i) => SCRIPT[i] ?? { text: 'Done.' });
  const model: ModelProvider = wire ? wireModel(wire, script).model : script;
  const h = createHarness(model, { retry: { maxRetries: 2, baseDelayMs: 0, maxDelayMs: 5, retryable: ['RATE_LIMIT'] } });
  hs.push(h);
  fs.writeFileSync(path.join(h.workspace, 'prices.txt'), 'apple 120\nbread 350\ncoffee 899\n');
  fs.writeFileSync(path.join(h.workspace, 'cart.txt'), 'apple 3\ncoffee 1\n');
  expect((await h.session.run('total the cart into total.txt')).reason).toBe('completed');
  expect((await h.session.run('and list the folder')).reason).toBe('max-tokens');
  await h.session.close();
  return h.entries();
}

/**
 * The log without what only a wire carries: opaque reasoning payloads, the provider's wording and status of an
 * error, the reasoning wire the header names, and the zero counts a wire always reports (the Responses API sends
 * `cached_tokens: 0` where a script says nothing).
 */
function neutral(es: readonly Entry[], workspace: string): unknown[] {
  const out = JSON.parse(JSON.stringify(es).replaceAll(workspace, '<ws>'), (k, v: unknown) => {
    if (k === 'provider' || k === 'data' || k === 'status' || k === 'message') return undefined;
    if (k === 'reasoning' && typeof v === 'string' && (WIRES as readonly string[]).includes(v)) return undefined;
    if ((k === 'reasoningTokens' || k === 'cachedTokens' || k === 'cacheWriteTokens') && v === 0) return undefined;
    return v;
  }) as Record<string, unknown>[];
  // Two reads that run together finish in either order, in any session: a run of tool entries is compared as a set
  // (its seqs and times go with the order). The model sees the results in call order either way (I2).
  const key = (e: Record<string, unknown>) => JSON.stringify({ ...e, seq: 0, at: 0 });
  const canon: string[] = [];
  for (let i = 0; i < out.length; ) {
    let j = i;
    while (j < out.length && String(out[j]!.kind).startsWith('tool/')) j++;
    if (j === i) canon.push(key(out[i++]!));
    else (canon.push(...out.slice(i, j).map(key).sort()), (i = j));
  }
  return canon;
}

describe.each(WIRES)('the golden session on the %s wire', (wire: Wire) => {
  it('replays through the machines byte for byte, and is the log the script writes with no wire', async () => {
    const plain = await session(undefined);
    const wired = await session(wire);
    const r = await replayThroughMachines(wired, builtinTools());
    expect(r.identical, r.firstDifference ? `${r.original.split('\n')[r.firstDifference - 1]}\n${r.text.split('\n')[r.firstDifference - 1]}` : '').toBe(true);
    expect(neutral(wired, hs[1]!.workspace)).toEqual(neutral(plain, hs[0]!.workspace));
  });
});
