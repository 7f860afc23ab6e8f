import { describe, expect, it } from 'vitest';
import type { Entry } from '../../log/entries.js';
import { builtinTools, optionalTools } from '../../tools/index.js';
import { chunkUpdate, currentPlan, entryUpdates, toolKind, toolLocations, toolTitle, type FeedState } from './updates.js';

const env = { seq: 1, at: '2026-01-01T00:00:00.000Z' } as const;
const ids = { turn: 't1', step: 't1.s1' } as const;
const state = (): FeedState => ({
  cwd: '/ws',
  tools: { get: (name) => (name === 'broken' ? { ...builtinTools()[0]!, present: () => { throw new Error('x'); } } : builtinTools().find((t) => t.name === name)) },
  calls: new Map(),
});
const call = (callId: string, name: string, args: unknown): Entry => ({ ...env, ...ids, kind: 'tool/call', callId, toolCallId: 'c', name, arguments: typeof args === 'string' ? args : JSON.stringify(args) });
const result = (callId: string, name: string, status: 'ok' | 'error' | 'denied', content: string, code?: string): Entry => ({ ...env, ...ids, kind: 'tool/result', callId, toolCallId: 'c', name, status, content, surfaceOp: 'append', ...(code ? { code } : {}) });

describe('the log as ACP updates', () => {
  it('kinds: the built-ins by what they do, fetching tools as fetch, the rest other', () => {
    expect(['read_file', 'list_dir', 'write_file', 'edit_file', 'grep', 'glob', 'bash', 'delegate', 'web_fetch', 'mcp__srv__fetch', 'mcp__srv__prefetcher', 'lint'].map(toolKind)).toEqual(['read', 'read', 'edit', 'edit', 'search', 'search', 'execute', 'think', 'fetch', 'fetch', 'other', 'other']);
  });

  it('locations: path arguments made absolute, read_file\'s offset as the line, none for bash or a call without a path', () => {
    expect(toolLocations('read_file', { path: 'src/a.ts', offset: 40 }, '/ws')).toEqual([{ path: '/ws/src/a.ts', line: 40 }]);
    expect(toolLocations('write_file', { path: '/ws/b' }, '/ws')).toEqual([{ path: '/ws/b' }]);
    expect(toolLocations('bash', { command: 'ls', path: 'x' }, '/ws')).toEqual([]);
    expect(toolLocations('glob', 'not json', '/ws')).toEqual([]);
  });

  it('locations only inside the workspace: a path the file tools refuse (/root/.ssh/id_rsa, ../x) is never sent to the editor', () => {
    expect(toolLocations('read_file', { path: '/root/.ssh/id_rsa' }, '/ws')).toEqual([]);
    expect(toolLocations('read_file', { path: '../ws-other/x' }, '/ws')).toEqual([]);
    expect(toolLocations('write_file', { path: 'a/../../etc/passwd' }, '/ws')).toEqual([]);
    expect(toolLocations('read_file', { path: 'a/../b' }, '/ws/')).toEqual([{ path: '/ws/b' }]);
    expect(toolLocations('list_dir', { path: '.' }, '/ws')).toEqual([{ path: '/ws' }]);
  });

  it('a call refused because its path leads out (a link) takes its location back; other failures leave it', () => {
    const s = state();
    const live = { kind: 'live' as const, streamed: new Set<string>() };
    expect(entryUpdates(call('t1.s1.c1', 'read_file', { path: 'link/id_rsa' }), s, live)[0]).toMatchObject({ locations: [{ path: '/ws/link/id_rsa' }] });
    expect(entryUpdates(result('t1.s1.c1', 'read_file', 'error', 'outside', 'OUTSIDE_WORKSPACE'), s, live)[0]).toMatchObject({ status: 'failed', locations: [] });
    entryUpdates(call('t1.s1.c2', 'read_file', { path: 'gone.txt' }), s, live);
    expect(entryUpdates(result('t1.s1.c2', 'read_file', 'error', 'no such file', 'NOT_FOUND'), s, live)[0]).not.toHaveProperty('locations');
  });

  it('titles come from the presenter; a missing tool or a throwing presenter gives the name', () => {
    const s = state();
    expect(toolTitle(s.tools, 'read_file', { path: 'a' })).toBe('read_file a');
    expect(toolTitle(s.tools, 'broken', {})).toBe('broken');
    expect(toolTitle(s.tools, 'gone', {})).toBe('gone');
  });

  it('a call: tool_call pending, in_progress at dispatch, completed with its text, or failed with its code', () => {
    const s = state();
    const live = { kind: 'live' as const, streamed: new Set<string>() };
    expect(entryUpdates(call('t1.s1.c1', 'read_file', { path: 'a' }), s, live)).toEqual([{ sessionUpdate: 'tool_call', toolCallId: 't1.s1.c1', title: 'read_file a', kind: 'read', status: 'pending', locations: [{ path: '/ws/a' }], rawInput: { path: 'a' } }]);
    expect(entryUpdates({ ...env, ...ids, kind: 'tool/dispatch', callId: 't1.s1.c1', name: 'read_file', idempotent: true }, s, live)).toEqual([{ sessionUpdate: 'tool_call_update', toolCallId: 't1.s1.c1', status: 'in_progress' }]);
    expect(entryUpdates(result('t1.s1.c1', 'read_file', 'ok', 'line 1'), s, live)[0]).toMatchObject({ status: 'completed', content: [{ type: 'content', content: { type: 'text', text: 'line 1' } }], rawOutput: { status: 'ok' } });
    expect(entryUpdates(result('t1.s1.c2', 'x', 'denied', 'no', 'DENIED'), s, live)[0]).toMatchObject({ status: 'failed', rawOutput: { status: 'denied', code: 'DENIED' } });
  });

  it('diffs: edit_file\'s replaced text, write_file\'s new content, only when the call succeeded; malformed arguments give none', () => {
    const s = state();
    const h = { kind: 'history' as const };
    entryUpdates(call('t1.s1.c1', 'edit_file', { path: 'a.ts', old_text: 'x = 1', new_text: 'x = 2' }), s, h);
    entryUpdates(call('t1.s1.c2', 'write_file', { path: 'b.ts', content: 'new' }), s, h);
    entryUpdates(call('t1.s1.c3', 'write_file', '{"path": "c.ts", oops'), s, h);
    expect(entryUpdates(result('t1.s1.c1', 'edit_file', 'ok', 'Edited'), s, h)[0]).toMatchObject({ content: [expect.anything(), { type: 'diff', path: '/ws/a.ts', oldText: 'x = 1', newText: 'x = 2' }] });
    expect(entryUpdates(result('t1.s1.c2', 'write_file', 'ok', 'Created'), s, h)[0]).toMatchObject({ content: [expect.anything(), { type: 'diff', path: '/ws/b.ts', newText: 'new' }] });
    expect((entryUpdates(result('t1.s1.c3', 'write_file', 'error', 'bad'), s, h)[0] as { content: unknown[] }).content).toHaveLength(1);
    expect((entryUpdates(result('t1.s1.c1', 'edit_file', 'error', 'not found'), s, h)[0] as { content: unknown[] }).content).toHaveLength(1);
  });

  it('messages: history shows the user\'s words and the answer\'s text and reasoning; live, only an answer whose text did not stream', () => {
    const s = state();
    const user: Entry = { ...env, turn: 't1', kind: 'user/message', text: 'hi', origin: 'user', surfaceOp: 'append' };
    const summary: Entry = { ...env, turn: 't1', kind: 'user/message', text: 'summary', origin: 'summary', surfaceOp: 'append' };
    const answer: Entry = { ...env, ...ids, kind: 'assistant/message', blocks: [{ type: 'reasoning', text: 'hmm' }, { type: 'text', text: 'hello' }, { type: 'tool-call', id: 'c', name: 'x', arguments: '{}' }], finish: { kind: 'ok', reason: 'stop' }, surfaceOp: 'append' };
    expect(entryUpdates(user, s, { kind: 'history' })).toEqual([{ sessionUpdate: 'user_message_chunk', content: { type: 'text', text: 'hi' } }]);
    expect(entryUpdates(summary, s, { kind: 'history' })).toEqual([]);
    expect(entryUpdates(user, s, { kind: 'live', streamed: new Set() })).toEqual([]);
    expect(entryUpdates(answer, s, { kind: 'history' }).map((u) => u.sessionUpdate)).toEqual(['agent_thought_chunk', 'agent_message_chunk']);
    expect(entryUpdates(answer, s, { kind: 'live', streamed: new Set(['t1.s1']) })).toEqual([]);
    expect(entryUpdates(answer, s, { kind: 'live', streamed: new Set() })).toHaveLength(2);
  });

  it('chunks: text and reasoning deltas stream; nothing else does', () => {
    expect(chunkUpdate({ type: 'text-delta', index: 0, text: 'a' })).toEqual({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'a' } });
    expect(chunkUpdate({ type: 'reasoning-delta', index: 0, text: 'b' })).toEqual({ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: 'b' } });
    expect(chunkUpdate({ type: 'text-delta', index: 0, text: '' })).toBeUndefined();
    expect(chunkUpdate({ type: 'tool-call-delta', index: 1, argumentsDelta: '{' })).toBeUndefined();
  });

  it('the plan now: the newest plan call logged ok (a failed one and later calls of other tools leave it), none without one', () => {
    const tools = { get: (name: string) => [...builtinTools(), ...optionalTools()].find((t) => t.name === name) };
    const plan = (n: number, status: string) => ({ entries: [{ content: `step ${n}`, status }] });
    const log: Entry[] = [
      call('t1.s1.c1', 'update_plan', plan(1, 'in_progress')),
      result('t1.s1.c1', 'update_plan', 'ok', 'Plan updated'),
      call('t1.s1.c2', 'update_plan', plan(2, 'pending')),
      result('t1.s1.c2', 'update_plan', 'error', 'bad'),
      call('t1.s1.c3', 'read_file', { path: 'a' }),
      result('t1.s1.c3', 'read_file', 'ok', 'text'),
    ];
    expect(currentPlan(log, tools)).toEqual({ sessionUpdate: 'plan', entries: [{ content: 'step 1', status: 'in_progress', priority: 'medium' }] });
    expect(currentPlan(log.slice(4), tools)).toBeUndefined();
    // The tool not offered now: its calls are not a plan.
    expect(currentPlan(log, { get: () => undefined })).toBeUndefined();
  });
});
