/**
 * `bridle trace`'s OTLP/JSON of every golden log, with and without content, pinned by digest: the bytes of
 * 2026-12-03 (b204ed6), from before the projection and the SDK shape stopped going through BigInt (ADR 0106).
 * A change that moves one byte of what a collector gets fails here, and must say why in its own ADR.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Entry } from '../../log/entries.js';
import { traceOf } from '../../log/trace.js';
import { otlpJson, traceResource } from './otlp.js';

const PINNED: Record<string, [plain: string, content: string]> = {
  approvals: ['80c01fddad4ad141', '220267d209769573'],
  compaction: ['12f5b824a9480d19', '16eacd043201fd33'],
  'crash-resume': ['e154ca55006390fa', '6007e17163ec8ac7'],
  'ctrl-c': ['6e758957c57782f2', 'c5a134637aaedb1d'],
  'flaky-checkout': ['b50388b44eed11b7', 'e0f195ce87535d4a'],
  schedule: ['6cb05a241d830653', 'f9bf0b79eb35cd7f'],
};

describe('OTLP/JSON of the golden logs', () => {
  it.each(Object.keys(PINNED))('%s: the same bytes as before', async (name) => {
    const entries = readFileSync(new URL(`../../test/golden/${name}.jsonl`, import.meta.url), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Entry);
    const digest = async (content: boolean) => createHash('sha256').update(await otlpJson(traceOf(entries, { content }), traceResource('1.2.3', {}))).digest('hex').slice(0, 16);
    expect([await digest(false), await digest(true)]).toEqual(PINNED[name]);
  });
});
