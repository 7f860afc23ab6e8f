/** The two self-contained files (their source text runs in the VM and the worker) spell the runner's codes by hand: only known ones. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { WORKFLOW_CODES } from '../../ports/workflow.js';

const spelled = (file: string) => [...readFileSync(new URL(file, import.meta.url), 'utf8').matchAll(/'(WORKFLOW_[A-Z_]+)'/g)].map((m) => m[1]!);

describe('the workflow codes the self-contained runtime spells', () => {
  it.each(['script-runtime.ts', 'quickjs-host.ts'])('every WORKFLOW_ code %s writes is one of WORKFLOW_CODES', (file) => {
    const known = new Set<string>(Object.values(WORKFLOW_CODES));
    const codes = spelled(file);
    expect(codes.length).toBeGreaterThan(0);
    expect(codes.filter((c) => !known.has(c))).toEqual([]);
  });
});
