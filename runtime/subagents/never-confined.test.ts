/**
 * `never` means "never ask" (ADR 0052, issue 22 item 1): a delegated child
 * runs what the session's confinement holds — a command under the parent's
 * bwrap, a write inside the workspace — and anything beyond it is refused at
 * once with a named reason the child's model reads. Parents and children are
 * real sessions of one product (memory logs, one function model telling them
 * apart by their task).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { z } from 'zod';
import { createMemorySessionStore } from '../../adapters/store/memory.js';
import { bridleTools } from '../../adapters/mcp/tools.js';
import type { ScriptedResponse } from '../../adapters/model/scripted-script.js';
import { deriveMessages } from '../../log/derive-messages.js';
import type { Entry, EntryOf } from '../../log/entries.js';
import type { ModelRequest } from '../../log/messages.js';
import type { ToolDefinition } from '../../ports/tools.js';
import { createHarness, type Harness, type HarnessOptions } from '../../test/helpers/harness.js';
import { describeWithSystemDep, SYSTEM_DEPS } from '../../test/helpers/system-deps.js';

let h: Harness | undefined;
afterEach(() => h?.cleanup());

const whoOf = (req: ModelRequest) => {
  const m = req.messages.find((x) => x.role === 'user');
  return m?.role === 'user' ? m.content : '';
};
const toolTexts = (req: ModelRequest) => req.messages.flatMap((m) => (m.role === 'tool' ? [m.content] : []));
const call = (name: string, args: Record<string, unknown>) => ({ name, arguments: args });

/** A parent under `ask` whose answerer counts every question (none may come), and its children, each log kept by id. */
function tree(respond: (who: string, req: ModelRequest, n: number) => ScriptedResponse, over: HarnessOptions = {}) {
  const sessions = createMemorySessionStore();
  const counts = new Map<string, number>();
  const asked: string[] = [];
  h = createHarness(
    async (req) => {
      const who = whoOf(req);
      const n = counts.get(who) ?? 0;
      counts.set(who, n + 1);
      return respond(who, req, n);
    },
    {
      approval: 'ask',
      answerer: async (r) => (asked.push(r.name), { outcome: 'rejected', by: 'test' }),
      ...over,
      settings: { maxDepth: 1, ...over.settings },
      services: { store: sessions, ...over.services },
    },
  );
  const log = (id: string): Entry[] => (sessions.get(id)?.text() ?? '').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Entry);
  return { log, asked, sessions };
}
const results = (log: readonly Entry[]) => log.filter((e): e is EntryOf<'tool/result'> => e.kind === 'tool/result');
const C1 = 'test-session.t1.s1.c1';

/** A tool that says it reaches the network from the harness; it must never run when the network is off. */
const fetchTool = (ran: string[]): ToolDefinition => ({
  name: 'fetch_url',
  description: 'Fetch a URL.',
  parameters: z.object({ url: z.string() }),
  readOnly: false,
  idempotent: true,
  confinement: 'network',
  present: (a: { url: string }) => `fetch ${a.url}`,
  execute: async (a: { url: string }) => (ran.push(a.url), { status: 'ok', content: 'fetched' }),
});

/** The path list of every file below `dir`, for "nothing changed outside the workspace". */
function listing(dir: string): string[] {
  return fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort();
}

describeWithSystemDep('never means never ask: children do confined work', SYSTEM_DEPS.bwrap, () => {
  it('a delegated child runs `grep -rl` in bash under the parent\'s bwrap and its result reaches the parent', async () => {
    const t = tree(
      (who, req, n) => {
        if (who === 'find the files that mention needle') {
          return n === 0 ? { toolCalls: [call('bash', { command: 'grep -rl needle . | sort' })] } : { text: `found: ${toolTexts(req).join('\n')}` };
        }
        return n === 0 ? { toolCalls: [call('delegate', { task: 'find the files that mention needle' })] } : { text: 'thanks' };
      },
      { settings: { sandbox: 'bwrap' } },
    );
    fs.mkdirSync(path.join(h!.workspace, 'src'));
    fs.writeFileSync(path.join(h!.workspace, 'src', 'hay.txt'), 'a needle in here\n');
    fs.writeFileSync(path.join(h!.workspace, 'other.txt'), 'nothing\n');
    const out = await h!.session.run('search');
    expect(out.reason).toBe('completed');
    expect(t.asked).toEqual([]);
    const child = t.log(C1);
    expect(results(child).find((r) => r.name === 'bash')).toMatchObject({ status: 'ok', content: expect.stringContaining('./src/hay.txt') });
    expect(results(child).find((r) => r.name === 'bash')!.content).not.toContain('other.txt');
    // The child ran under bwrap: its session/start logs the parent's confinement and approval never.
    expect(child[0]).toMatchObject({ kind: 'session/start', policy: { approval: 'never', sandbox: 'bwrap', mode: 'workspace-write', network: false } });
    const delegated = results(h!.entries()).find((r) => r.name === 'delegate')!;
    expect(delegated).toMatchObject({ status: 'ok', content: expect.stringContaining('./src/hay.txt') });
  });

  it('a workflow whose agents each fix one file, under --approval ask in the parent, changes the files with no question asked of anyone and nothing outside the workspace', async () => {
    const script = `return await parallel(['a.js', 'b.js'].map((f) => () => agent('fix ' + f)));`;
    const t = tree(
      (who, _req, n) => {
        const file = /^fix (\w+\.js)$/.exec(who)?.[1];
        if (file) {
          if (n === 0) return { toolCalls: [call('edit_file', { path: file, old_text: 'BUG', new_text: 'FIXED' })] };
          if (n === 1) return { toolCalls: [call('bash', { command: `grep -c FIXED ${file}` })] };
          return { text: `fixed ${file}` };
        }
        return n === 0 ? { toolCalls: [call('workflow', { script })] } : { text: 'both fixed' };
      },
      { settings: { sandbox: 'bwrap' } },
    );
    const outside = path.dirname(h!.workspace);
    fs.writeFileSync(path.join(h!.workspace, 'a.js'), 'const a = BUG;\n');
    fs.writeFileSync(path.join(h!.workspace, 'b.js'), 'const b = BUG;\n');
    const before = listing(outside).filter((p) => !p.startsWith(path.basename(h!.workspace)));
    const out = await h!.session.run('fix both');
    expect(out.reason).toBe('completed');
    expect(t.asked).toEqual([]);
    expect(h!.entries().some((e) => e.kind === 'approval/asked')).toBe(false);
    expect(fs.readFileSync(path.join(h!.workspace, 'a.js'), 'utf8')).toBe('const a = FIXED;\n');
    expect(fs.readFileSync(path.join(h!.workspace, 'b.js'), 'utf8')).toBe('const b = FIXED;\n');
    for (const child of [`${C1}.a1`, `${C1}.a2`]) {
      const log = t.log(child);
      expect(log.some((e) => e.kind === 'approval/asked')).toBe(false);
      expect(results(log).map((r) => [r.name, r.status])).toEqual([['edit_file', 'ok'], ['bash', 'ok']]);
    }
    expect(JSON.parse(results(h!.entries()).find((r) => r.name === 'workflow')!.content)).toEqual(['fixed a.js', 'fixed b.js']);
    expect(listing(outside).filter((p) => !p.startsWith(path.basename(h!.workspace)))).toEqual(before);
  });

  it('a never child\'s network, .git and unannotated MCP calls are refused at once with the named reason its model reads', async () => {
    const ran: string[] = [];
    const mcp = bridleTools('mcp:docs', [{ name: 'search', inputSchema: { type: 'object', properties: {} } }], async () => (ran.push('mcp'), { status: 'ok', content: 'hit' }), 1000).tools;
    const t = tree(
      (who, _req, n) => {
        if (who === 'try the edges') {
          return n === 0
            ? { toolCalls: [call('fetch_url', { url: 'https://example.com' }), call('write_file', { path: '.git/hooks/pre-commit', content: 'evil' }), call('mcp__docs__search', {}), call('write_file', { path: 'ok.txt', content: 'fine' })] }
            : { text: 'done' };
        }
        return n === 0 ? { toolCalls: [call('delegate', { task: 'try the edges' })] } : { text: 'ok' };
      },
      { settings: { sandbox: 'bwrap' }, plugins: [{ name: 'edges', apply: (ctx) => void [fetchTool(ran), ...mcp].forEach((tool) => ctx.tools.register(tool)) }] },
    );
    fs.mkdirSync(path.join(h!.workspace, '.git', 'hooks'), { recursive: true });
    const out = await h!.session.run('go');
    expect(out.reason).toBe('completed');
    expect(t.asked).toEqual([]);
    const child = t.log(C1);
    const byName = (n: string) => results(child).filter((r) => r.name === n);
    expect(byName('fetch_url')[0]).toMatchObject({ status: 'denied', code: 'DENIED', content: expect.stringContaining('NETWORK_OFF') });
    expect(byName('write_file').map((r) => r.status)).toEqual(['denied', 'ok']);
    expect(byName('write_file')[0]!.content).toContain('GIT_WRITE');
    expect(byName('mcp__docs__search')[0]).toMatchObject({ status: 'denied', content: expect.stringContaining('NO_CONFINEMENT') });
    expect(byName('mcp__docs__search')[0]!.content).toContain('runs outside the sandbox');
    expect(ran).toEqual([]);
    expect(fs.existsSync(path.join(h!.workspace, '.git', 'hooks', 'pre-commit'))).toBe(false);
    expect(fs.readFileSync(path.join(h!.workspace, 'ok.txt'), 'utf8')).toBe('fine');
    // What the child's model read says why, by name.
    const seen = deriveMessages(child).flatMap((m) => (m.role === 'tool' ? [m.content] : []));
    expect(seen.some((c) => c.includes('approval policy "never"') && c.includes('NETWORK_OFF'))).toBe(true);
  });
});

it('under never, bash with the sandbox off, or in full mode, is refused by name; a write inside the workspace still runs', async () => {
  for (const [settings, code] of [[{ sandbox: 'off' }, 'SANDBOX_OFF'], [{ sandbox: 'bwrap', sandboxMode: 'full' }, 'FULL_MODE']] as const) {
    const t = tree(
      (who, _req, n) => {
        if (who === 'run it') return n === 0 ? { toolCalls: [call('bash', { command: 'touch ran.txt' }), call('write_file', { path: 'w.txt', content: 'w' })] } : { text: 'done' };
        return n === 0 ? { toolCalls: [call('delegate', { task: 'run it' })] } : { text: 'ok' };
      },
      { settings },
    );
    await h!.session.run('go');
    const child = t.log(C1);
    expect(results(child).map((r) => [r.name, r.status])).toEqual([['bash', 'denied'], ['write_file', 'ok']]);
    expect(results(child)[0]!.content).toContain(code);
    expect(fs.existsSync(path.join(h!.workspace, 'ran.txt'))).toBe(false);
    expect(t.asked).toEqual([]);
    h!.cleanup();
    h = undefined;
  }
});
