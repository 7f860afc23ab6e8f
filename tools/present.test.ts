/** Chapter 4's presenters: the built-ins' render intents, and tools with only `present` (every plugin before them) as generic. */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ToolDefinition } from '../ports/tools.js';
import { builtinTools } from './index.js';
import { presentCall, presentResult } from './present.js';

const tools = new Map<string, ToolDefinition>(builtinTools().map((t) => [t.name, t]));
const ok = (content: string) => ({ status: 'ok', content });

describe('the built-in presenters', () => {
  it('bash is a terminal: the command, the exit code and what it printed; a denial is generic', () => {
    expect(presentResult(tools, 'bash', '{"command":"npm test"}', ok('exit code: 0\n--- stdout ---\npassed 3'))).toEqual({
      kind: 'terminal', command: 'npm test', exitCode: 0, output: '--- stdout ---\npassed 3', title: 'bash: npm test', status: 'ok',
    });
    expect(presentResult(tools, 'bash', '{"command":"sleep 9"}', { status: 'error', code: 'TOOL_TIMEOUT', content: 'Command timed out after 5 ms and was killed.\nexit code: none (killed by SIGKILL)\n(no output)' })).toMatchObject({ kind: 'terminal', exitCode: null, output: '(no output)', code: 'TOOL_TIMEOUT' });
    expect(presentResult(tools, 'bash', '{"command":"rm -r /"}', { status: 'denied', content: 'denied: outside the sandbox' })).toMatchObject({ kind: 'generic', text: 'denied: outside the sandbox', status: 'denied' });
  });

  it('edit_file and write_file are diffs of what the call asked for', () => {
    expect(presentResult(tools, 'edit_file', JSON.stringify({ path: 'a.ts', old_text: 'x = 1', new_text: 'x = 2' }), ok('Edited a.ts'))).toMatchObject({
      kind: 'diff', path: 'a.ts', oldText: 'x = 1', newText: 'x = 2', lines: [{ op: '-', text: 'x = 1' }, { op: '+', text: 'x = 2' }], title: 'edit_file a.ts (-1 +1 lines)',
    });
    expect(presentResult(tools, 'write_file', JSON.stringify({ path: 'b', content: 'hi\n' }), ok('Created b'))).toMatchObject({ kind: 'diff', oldText: null, newText: 'hi\n', lines: [{ op: '+', text: 'hi' }] });
  });

  it('grep and glob are searches: the hits, the notes; no hits is an empty search', () => {
    expect(presentResult(tools, 'grep', '{"pattern":"load"}', ok('a.js:12:   load(x);\nb/c.js:3: load()\n[stopped at 500 matches; narrow the pattern or the path]'))).toMatchObject({
      kind: 'search', query: '/load/ in .', matches: [{ path: 'a.js', line: 12, text: '  load(x);' }, { path: 'b/c.js', line: 3, text: 'load()' }], notes: ['[stopped at 500 matches; narrow the pattern or the path]'],
    });
    expect(presentResult(tools, 'grep', '{"pattern":"zz"}', ok('No matches for /zz/ in ..'))).toMatchObject({ kind: 'search', matches: [], notes: [] });
    expect(presentResult(tools, 'glob', '{"pattern":"**/*.ts"}', ok('a.ts\nb/c.ts'))).toMatchObject({ kind: 'search', query: '**/*.ts', matches: [{ path: 'a.ts' }, { path: 'b/c.ts' }] });
    expect(presentResult(tools, 'glob', '{"pattern":"*.x"}', ok('No files match "*.x".'))).toMatchObject({ kind: 'search', matches: [] });
  });

  it('the others are generic: the result under the call line', () => {
    expect(presentResult(tools, 'read_file', '{"path":"a"}', ok('1\tx'))).toEqual({ kind: 'generic', text: '1\tx', title: 'read_file a', status: 'ok' });
  });
});

describe('presentResult is total and keeps plugins with only present working', () => {
  const plugin: ToolDefinition = { name: 'lint', description: 'lints', parameters: z.object({ path: z.string() }), readOnly: true, idempotent: true, execute: async () => ({ status: 'ok', content: '' }), present: (a: { path: string }) => `lint ${a.path}` };

  it('a tool with only present is generic, titled by present', () => {
    expect(presentResult(new Map([['lint', plugin]]), 'lint', '{"path":"x.ts"}', ok('clean'))).toEqual({ kind: 'generic', text: 'clean', title: 'lint x.ts', status: 'ok' });
    expect(presentCall(new Map([['lint', plugin]]), 'lint', '{"path":"x.ts"}')).toBe('lint x.ts');
  });

  it('a presenter that throws, returns nonsense or undefined, an unknown tool and arguments not its own all give generic', () => {
    const bad = (presentResult: ToolDefinition['presentResult']) => new Map([['lint', { ...plugin, presentResult }]]);
    const generic = { kind: 'generic', text: 'clean', status: 'ok' };
    expect(presentResult(bad(() => { throw new Error('x'); }), 'lint', '{"path":"a"}', ok('clean'))).toMatchObject(generic);
    expect(presentResult(bad(() => ({ kind: 'terminal', command: 1 }) as never), 'lint', '{"path":"a"}', ok('clean'))).toMatchObject(generic);
    expect(presentResult(bad(() => undefined), 'lint', '{"path":"a"}', ok('clean'))).toMatchObject(generic);
    expect(presentResult(bad(() => ({ kind: 'search', query: 'q', matches: [], notes: [] })), 'lint', '{"path":1}', ok('clean'))).toMatchObject({ ...generic, title: 'lint {"path":1}' });
    expect(presentResult(new Map(), 'gone', 'not json', ok('clean'))).toMatchObject({ ...generic, title: 'gone not json' });
  });

  it('a plugin presenter is used when it gives a well-formed intent', () => {
    const tool = new Map([['lint', { ...plugin, presentResult: (a: { path: string }) => ({ kind: 'search' as const, query: a.path, matches: [{ path: a.path, line: 3, text: 'no-var' }], notes: [] }) }]]);
    expect(presentResult(tool, 'lint', '{"path":"a.ts"}', ok('a.ts:3 no-var'))).toMatchObject({ kind: 'search', query: 'a.ts', matches: [{ path: 'a.ts', line: 3 }], title: 'lint a.ts' });
  });
});
