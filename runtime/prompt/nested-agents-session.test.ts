import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { replayThroughMachines } from '../../replay/replay.js';
import { createHarness, type Harness } from '../../test/helpers/harness.js';
import { builtinTools } from '../../tools/index.js';

let h: Harness | undefined;
afterEach(() => {
  h?.cleanup();
  h = undefined;
});

describe('nested AGENTS.md reaches the model only through logged results (issue 23 item 6)', () => {
  it('is added once to the first file tool result in its directory, the root file stays in the system prompt, and replay is byte for byte', async () => {
    const reads = ['pkg/a.ts', 'pkg/b.ts', 'top.ts'];
    h = createHarness((_r, i) => (i < reads.length ? { toolCalls: [{ name: 'read_file', arguments: { path: reads[i] } }] } : { text: 'done' }));
    const ws = h.workspace;
    fs.writeFileSync(path.join(ws, 'AGENTS.md'), 'ROOT RULES');
    fs.mkdirSync(path.join(ws, 'pkg'));
    fs.writeFileSync(path.join(ws, 'pkg', 'AGENTS.md'), 'PKG RULES');
    fs.writeFileSync(path.join(ws, 'pkg', 'a.ts'), 'a');
    fs.writeFileSync(path.join(ws, 'pkg', 'b.ts'), 'b');
    fs.writeFileSync(path.join(ws, 'top.ts'), 't');
    h.session.send('read them');
    await h.session.idle();
    const results = h.entries().flatMap((e) => (e.kind === 'tool/result' ? [e.content] : []));
    expect(results.map((c) => c.includes('PKG RULES'))).toEqual([true, false, false]);
    expect(results.join('\n')).not.toContain('ROOT RULES');
    const header = h.entries().find((e) => e.kind === 'request/header');
    expect(JSON.stringify(header)).toContain('ROOT RULES');
    expect(JSON.stringify(header)).not.toContain('PKG RULES');
    // What the model was sent for the later steps carries the nested text, as logged.
    expect(JSON.stringify(h.requests.at(-1)!.request.messages)).toContain('PKG RULES');

    const r = await replayThroughMachines(h.entries(), builtinTools());
    expect(r.identical).toBe(true);
  });
});
