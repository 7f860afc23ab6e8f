import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createScriptedProviderFromFunction } from '../adapters/model/scripted.js';
import { createMemoryStore } from '../adapters/store/memory.js';
import type { Entry, EntryOf } from '../log/entries.js';
import { verifyLog } from '../log/verify.js';
import type { Subagents } from '../ports/subagents.js';
import { asChild, createSession } from './session.js';
import { createMemoryFs } from '../adapters/fs/memory.js';
import { createMemorySubprocess } from '../adapters/subprocess/memory.js';
import { createHarness, steppingClock, type Harness } from '../test/helpers/harness.js';
import { delegateTool, renderCompletedTurns } from './subagent.js';
import type { ModelRequest } from '../log/messages.js';

let h: Harness | undefined;
afterEach(() => h?.cleanup());

/** A parent whose model delegates, and children answered by `child`; every child log kept. */
function withSubagents(parent: (req: ModelRequest, i: number) => any, child: (req: ModelRequest, i: number) => any, maxDepth = 1) {
  const children = new Map<string, ReturnType<typeof createMemoryStore>>();
  const subagents: Subagents = {
    spawn: ({ id, depth }) => {
      const store = createMemoryStore(`memory:${id}`);
      children.set(id, store);
      const s = createSession({
        id,
        depth,
        parent: 'test-session',
        cwd: h!.workspace,
        bridleHome: h!.bridleHome,
        settings: { approval: 'never', sandbox: 'off', maxDepth },
        services: { model: { ...createScriptedProviderFromFunction(child), name: 'scripted-child' }, store, clock: steppingClock() },
        sleep: async () => {},
      });
      return asChild(s);
    },
  };
  h = createHarness(parent, { settings: { maxDepth }, services: { subagents } });
  return children;
}

const entriesOf = (text: string): Entry[] => text.trim().split('\n').map((l) => JSON.parse(l));

describe('subagents (I10)', () => {
  it('delegate runs a child session with its own log and depth, under approval never; the parent brackets it', async () => {
    const children = withSubagents(
      (_r, i) => (i === 0 ? { toolCalls: [{ name: 'delegate', arguments: { task: 'list the workspace and write a file' } }] } : { text: 'parent done' }),
      (_r, i) =>
        i === 0
          ? { toolCalls: [{ name: 'list_dir', arguments: {} }, { name: 'write_file', arguments: { path: 'x.txt', content: 'no' } }] }
          : { text: 'child report: one file, and I was not allowed to write' },
    );
    fs.writeFileSync(path.join(h!.workspace, 'a.txt'), 'a');
    const out = await h!.session.run('go');
    expect(out.reason).toBe('completed');
    const log = h!.entries();
    const start = log.find((e) => e.kind === 'subagent/start') as EntryOf<'subagent/start'>;
    expect(start).toMatchObject({ callId: 't1.s1.c1', child: 'test-session.t1.s1.c1', depth: 1, mode: 'spawn' });
    expect(log.find((e) => e.kind === 'subagent/end')).toMatchObject({ child: start.child, reason: 'completed' });
    const result = log.find((e) => e.kind === 'tool/result' && e.name === 'delegate') as EntryOf<'tool/result'>;
    expect(result.status).toBe('ok');
    expect(result.content).toContain('child report: one file');
    expect(verifyLog(log).violations).toEqual([]);

    const child = entriesOf(children.get(start.child)!.text());
    expect(child[0]).toMatchObject({ kind: 'session/start', depth: 1, parent: 'test-session' });
    // Approval policy never: the child's write was denied, its read ran.
    const childResults = child.filter((e): e is EntryOf<'tool/result'> => e.kind === 'tool/result').sort((a, b) => a.callId.localeCompare(b.callId));
    expect(childResults.map((r) => [r.name, r.status])).toEqual([
      ['list_dir', 'ok'],
      ['write_file', 'denied'],
    ]);
    expect(fs.existsSync(path.join(h!.workspace, 'x.txt'))).toBe(false);
    expect(verifyLog(child).violations).toEqual([]);
  });

  it('the depth limit is checked: a child at the limit gets no delegate tool, and the parent cannot go past it', async () => {
    const seen: string[][] = [];
    withSubagents(
      (_r, i) => (i === 0 ? { toolCalls: [{ name: 'delegate', arguments: { task: 'go deeper' } }] } : { text: 'ok' }),
      (req) => {
        seen.push(req.tools.map((t) => t.name));
        return { text: 'leaf' };
      },
      1,
    );
    await h!.session.run('go');
    expect(seen[0]).not.toContain('delegate');
    const atLimit = { id: 'p', depth: 1, cwd: '/', bridleHome: '/', inject: () => undefined, entries: () => [], record: () => undefined };
    const direct = delegateTool({ maxDepth: 1, parent: atLimit, subagents: { spawn: () => { throw new Error('no child past the limit'); } } });
    await expect(direct.execute({ task: 'x' }, { fs: createMemoryFs(), subprocess: createMemorySubprocess(), signal: new AbortController().signal, callId: 't1.s1.c1' })).rejects.toMatchObject({ code: 'DEPTH_LIMIT' });
  });

  it('a fork sees the completed turns only, never the running one', async () => {
    const childFirst: ModelRequest[] = [];
    withSubagents(
      (req, i) => {
        const last = JSON.stringify(req.messages.at(-1));
        if (last.includes('second')) return i === 1 ? { toolCalls: [{ name: 'delegate', arguments: { task: 'summarize', mode: 'fork' } }] } : { text: 'second done' };
        return { text: 'first answer' };
      },
      (req) => {
        childFirst.push(req);
        return { text: 'forked report' };
      },
    );
    await h!.session.run('first question');
    await h!.session.run('second question');
    const note = JSON.stringify(childFirst[0]!.messages);
    expect(note).toContain('first question');
    expect(note).toContain('first answer');
    expect(note).not.toContain('second question');
    expect(renderCompletedTurns([])).toBe('');
  });
});
