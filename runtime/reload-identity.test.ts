/**
 * Course ch. 2, "make a plugin safely reloadable": a reload is identity. The
 * registries after reloading a row equal those of one mount, in order, not
 * merely as sets: tool order is what the request carries (and caches on), and
 * a waterfall's precedence decides what a failure becomes.
 */
import { describe, expect, it } from 'vitest';
import type { Plugin } from '../plugins/host.js';
import type { ComposedRow } from '../plugins/rows.js';
import type { Recovery, RequestErrorPayload } from '../ports/hooks.js';
import type { SessionControl } from '../ports/session.js';
import type { ToolDefinition } from '../ports/tools.js';
import { z } from 'zod';
import { buildHost } from './host.js';

const tool = (name: string): ToolDefinition => ({
  name,
  description: name,
  parameters: z.strictObject({}),
  readOnly: true,
  execute: async () => ({ ok: true, output: name }),
}) as unknown as ToolDefinition;

const tools = (name: string, ...names: string[]): Plugin => ({ name, apply: (ctx) => void names.forEach((n) => ctx.tools.register(tool(n))) });
/** The course's "give up on AUTH" listener, inserted before `recovery:retry`. */
const giveUp: Plugin = {
  name: 'give-up',
  apply(ctx) {
    ctx.hooks.on('request-error', async (p, next) => (p.code === 'AUTH' || p.code === 'RATE_LIMIT' ? { kind: 'give-up' } : next()));
    ctx.prompt.section({ id: 'give-up', order: 50, template: 'give up early' });
  },
};
const note = (name: string): Plugin => ({ name, apply: (ctx) => void ctx.prompt.section({ id: name, order: 50, template: name }) });

const loaded = new Map<string, Plugin<any>>([
  ['./first.js', tools('first', 'a', 'b')],
  ['./give-up.js', giveUp],
  ['./second.js', tools('second', 'c')],
  ['./note.js', note('note')],
]);
const rows: ComposedRow[] = [
  { id: 'tool:first', use: './first.js', from: 'test' },
  { id: 'recovery:give-up', use: './give-up.js', from: 'test' },
  { id: 'recovery:retry', use: 'retry', from: 'test' },
  { id: 'tool:second', use: './second.js', from: 'test' },
  { id: 'prompt:note', use: './note.js', from: 'test' },
];
const session = { id: 's', depth: 0, cwd: '/nowhere', bridleHome: '/nowhere' } as unknown as SessionControl;

const rateLimited: RequestErrorPayload = {
  turn: 't1',
  step: 's1',
  code: 'RATE_LIMIT',
  finish: { kind: 'error', code: 'RATE_LIMIT', message: 'slow down' } as RequestErrorPayload['finish'],
  failures: 1,
  overflowRetried: false,
};

const readOut = async (built: ReturnType<typeof buildHost>) => ({
  tools: built.tools.list().map((t) => t.name),
  requestError: built.hooks.listeners('request-error').map((r) => r.owner),
  prompt: built.prompt.ids('session'),
  status: built.host.status().map((s) => `${s.id}:${s.state}`),
  verdict: await built.hooks.waterfall('request-error', rateLimited, async (): Promise<Recovery> => ({ kind: 'give-up' }), { report: () => undefined }),
});

describe('Host.reload is identity (course ch. 2)', () => {
  it('reloading twice in a row leaves the registries identical to a single mount, in order, unsorted', async () => {
    const once = await readOut(buildHost(rows, { session, loaded }));
    expect(once.verdict).toEqual({ kind: 'give-up' });
    for (const id of ['tool:first', 'recovery:give-up', 'prompt:note']) {
      const twice = buildHost(rows, { session, loaded });
      twice.host.reload(id);
      twice.host.reload(id);
      expect(await readOut(twice), `after reloading ${id}`).toEqual(once);
    }
  });

  it('a reloaded "give up" recovery listener still answers before the retry listener, so the failure is not retried', async () => {
    const built = buildHost(rows, { session, loaded });
    built.host.reload('recovery:give-up');
    expect(built.hooks.listeners('request-error').map((r) => r.owner)).toEqual(['recovery:give-up', 'recovery:retry']);
    expect((await readOut(built)).verdict).toEqual({ kind: 'give-up' });
  });
});
