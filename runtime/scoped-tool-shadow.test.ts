/**
 * Course ch. 4: "a scoped tool shadows a same-named global one". A child's
 * own tool named like one of its product's tools replaces it for that child
 * (listed once, found, executed); its parent keeps the global one; two
 * globals of one name still refuse to compose.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createMemorySessionStore } from '../adapters/store/memory.js';
import type { Plugin } from '../plugins/host.js';
import { type ComposedRow } from '../plugins/rows.js';
import { CompositionError } from '../plugins/composition-error.js';
import { SESSION } from '../ports/index.js';
import type { SessionControl } from '../ports/session.js';
import type { ToolDefinition } from '../ports/tools.js';
import { createHarness, type Harness } from '../test/helpers/harness.js';
import { buildHost } from './host.js';

let h: Harness | undefined;
afterEach(() => h?.cleanup());

const ownReadFile: ToolDefinition = {
  name: 'read_file',
  description: 'the child’s own read_file',
  parameters: z.strictObject({ path: z.string() }),
  readOnly: true,
  idempotent: true,
  execute: async ({ path }: { path: string }) => ({ status: 'ok', content: `scoped copy of ${path}` }),
  present: ({ path }: { path: string }) => `read ${path}`,
};

describe('a scoped tool shadows a global one (course ch. 4)', () => {
  it('a scoped tool shadows a same-named global one for that child, not for its parent', async () => {
    let control: SessionControl | undefined;
    const grab: Plugin = { name: 'grab', apply: (ctx) => void (control = ctx.get(SESSION)) };
    const toolLists: string[][] = [];
    h = createHarness(
      (req) => {
        toolLists.push(req.tools.map((t) => t.name));
        const answered = req.messages.some((m) => m.role === 'tool');
        return answered ? { text: 'done' } : { toolCalls: [{ name: 'read_file', arguments: { path: 'notes.txt' } }] };
      },
      { plugins: [grab], services: { store: createMemorySessionStore() } },
    );
    const child = control!.child({ id: 'test-session.c1', depth: 1, approval: 'never', scoped: [ownReadFile] });
    const out = await child.run('read notes.txt');
    await child.close();
    expect(out).toMatchObject({ reason: 'completed' });
    const result = child.entries().find((e) => e.kind === 'tool/result');
    expect(result).toMatchObject({ status: 'ok', content: 'scoped copy of notes.txt' });
    // Listed once, where the child's own tools stand: after its product's.
    expect(toolLists[0]!.filter((n) => n === 'read_file')).toHaveLength(1);
    expect(toolLists[0]!.at(-1)).toBe('read_file');

    // The parent still has the product's read_file.
    toolLists.length = 0;
    const parent = await h.session.run('read notes.txt');
    expect(parent.reason).toBe('completed');
    expect(h.entries().find((e) => e.kind === 'tool/result')).toMatchObject({ status: 'error', code: 'NOT_FOUND' });
    expect(toolLists[0]!.indexOf('read_file')).toBeLessThan(toolLists[0]!.length - 1);
  });

  it('two global tools of one name still refuse to compose, naming both rows', () => {
    const twin = (name: string): Plugin => ({ name, apply: (ctx) => void ctx.tools.register({ ...ownReadFile, name: 'twin' }) });
    const loaded = new Map<string, Plugin<any>>([['./a.js', twin('a')], ['./b.js', twin('b')]]);
    const rows: ComposedRow[] = [
      { id: 'tool:a', use: './a.js', from: 'test' },
      { id: 'tool:b', use: './b.js', from: 'test' },
    ];
    const session = { id: 's', depth: 0, cwd: '/nowhere', bridleHome: '/nowhere' } as unknown as SessionControl;
    expect(() => buildHost(rows, { session, loaded })).toThrow(CompositionError);
    expect(() => buildHost(rows, { session, loaded })).toThrow(/tool twin is registered twice: by tool:a and by tool:b/);
  });
});
