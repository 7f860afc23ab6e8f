/**
 * The share of consecutive requests that extend the one before (same system prompt and tools, the
 * conversation only appended to), over a 3-turn, 40-step scripted session with compaction, per provider:
 * the bytes each real SDK sent (test/helpers/cache-session.ts). A request that extends the one before can
 * be answered from the prompt cache that one wrote; the rest break at compactions.
 *
 *   npm run build && node dist/bench/cache-share.js      (also a row of `npm run bench`)
 */
import { pathToFileURL } from 'node:url';
import { extensionShare, runCacheSession } from '../test/helpers/cache-session.js';
import { WIRES } from '../test/helpers/wire-fake.js';

export async function bench(): Promise<{ label: string; value: Record<string, unknown> }> {
  const value: Record<string, unknown> = {};
  for (const wire of WIRES) {
    const run = await runCacheSession(wire);
    const s = extensionShare(run.requests);
    value[wire] = { requests: run.requests.length, compactions: run.compactions, extending: s.extending, pairs: s.pairs, share: Number(s.share.toFixed(3)) };
  }
  return { label: 'cache-stable requests (3 turns, 40 steps, compaction)', value };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const r = await bench();
  process.stdout.write(`${r.label}\n`);
  for (const [wire, v] of Object.entries(r.value)) {
    const x = v as { requests: number; compactions: number; extending: number; pairs: number; share: number };
    process.stdout.write(`  ${wire}: ${x.extending} of ${x.pairs} consecutive requests extend the one before (${(x.share * 100).toFixed(1)}%), ${x.requests} requests, ${x.compactions} compactions\n`);
  }
}
