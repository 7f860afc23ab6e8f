import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { request, run, type Drained } from '../../test/helpers/model-stream.js';
import { createScriptedProvider, createScriptedProviderFromFunction, responseChunks } from './scripted.js';
import { loadScript, type Script, ScriptError } from './scripted-script.js';
import { tempDir } from '../../test/helpers/temp.js';

function wellFormed(d: Drained): Drained {
  expect(d.problems).toEqual([]);
  expect(d.chunks.filter((c) => c.type === 'finish')).toHaveLength(1);
  expect(d.chunks.at(-1)?.type).toBe('finish');
  return d;
}

const script: Script = {
  label: 'scripted: read then answer',
  model: 'demo-model',
  responses: [
    { reasoning: 'look first', toolCalls: [{ name: 'read_file', arguments: { path: 'a.ts' } }, { name: 'edit', arguments: '{"path": oops' }], usage: { inputTokens: 5, outputTokens: 7 } },
    { text: 'All done, the test passes now.' },
    { error: { code: 'RATE_LIMIT', message: 'slow down', retryAfterMs: 10, status: 429 } },
  ],
};

describe('scripted provider', () => {
  test('answers in order with the same chunk protocol: reasoning, text, tool calls, usage, finish', async () => {
    const p = createScriptedProvider(script);
    const first = wellFormed(await run(p));
    expect(first.assembly.blocks).toEqual([
      { type: 'reasoning', text: 'look first' },
      { type: 'tool-call', id: 'call_0_0', name: 'read_file', arguments: '{"path":"a.ts"}' },
      { type: 'tool-call', id: 'call_0_1', name: 'edit', arguments: '{"path": oops' },
    ]);
    expect(first.assembly.usage).toEqual({ inputTokens: 5, outputTokens: 7 });
    expect(first.finish).toEqual({ kind: 'ok', reason: 'tool-calls' });

    const second = wellFormed(await run(p));
    expect(second.assembly.blocks).toEqual([{ type: 'text', text: 'All done, the test passes now.' }]);
    expect(second.chunks.filter((c) => c.type === 'text-delta').length).toBe(3);
    expect(second.finish).toEqual({ kind: 'ok', reason: 'stop' });

    const third = wellFormed(await run(p));
    expect(third.chunks).toEqual([
      { type: 'finish', finish: { kind: 'error', code: 'RATE_LIMIT', message: 'slow down', retryAfterMs: 10, status: 429 } },
    ]);

    for (let i = 0; i < 2; i++) {
      expect(wellFormed(await run(p)).finish).toEqual({
        kind: 'error',
        code: 'EMPTY_RESPONSE',
        message: 'scripted model: script exhausted after 3 responses',
      });
    }
    expect(p.calls).toBe(5);
    expect(p).toMatchObject({ id: 'scripted', label: 'scripted: read then answer', model: 'demo-model' });
  });

  test('an explicit finish wins; an answer with nothing in it is EMPTY_RESPONSE', () => {
    expect(responseChunks({ text: 'cut', finish: 'length' }, 0).at(-1)).toEqual({ type: 'finish', finish: { kind: 'ok', reason: 'length' } });
    expect(responseChunks({}, 4).at(-1)).toMatchObject({ finish: { code: 'EMPTY_RESPONSE', message: 'scripted model: response 4 has no text and no tool calls' } });
    expect(responseChunks({ toolCalls: [{ name: 'ls' }] }, 1)).toContainEqual({ type: 'tool-call-delta', index: 0, argumentsDelta: '{}' });
  });

  test('labels always say "scripted"', () => {
    expect(createScriptedProvider({ responses: [] }).label).toBe('scripted');
    expect(createScriptedProvider({ label: 'my demo', responses: [] }).label).toBe('scripted: my demo');
    expect(createScriptedProviderFromFunction(() => undefined, { label: 'Scripted bench' }).label).toBe('Scripted bench');
  });

  test('an already aborted signal ends with aborted and consumes no response', async () => {
    const p = createScriptedProvider(script);
    const ac = new AbortController();
    ac.abort();
    expect(wellFormed(await run(p, request(), ac.signal)).chunks).toEqual([{ type: 'finish', finish: { kind: 'aborted' } }]);
    expect(p.calls).toBe(0);
    expect(wellFormed(await run(p)).assembly.blocks[0]).toEqual({ type: 'reasoning', text: 'look first' });
  });

  test('an abort mid-stream closes the open block and ends with aborted', async () => {
    const p = createScriptedProvider({ responses: [{ text: 'one two three four five six' }] }, { deltas: 6 });
    const ac = new AbortController();
    const tapped = {
      id: 'tap',
      async *stream() {
        for await (const c of p.stream(request(), ac.signal)) {
          if (c.type === 'text-delta') ac.abort();
          yield c;
        }
      },
    };
    const d = wellFormed(await run(tapped));
    expect(d.chunks.map((c) => c.type)).toEqual(['first-chunk', 'block-start', 'text-delta', 'block-end', 'finish']);
    expect(d.finish).toEqual({ kind: 'aborted' });
  });

  test('with delayMs, an abort during a pause still ends cleanly', async () => {
    const p = createScriptedProvider({ responses: [{ text: 'slow text here' }] }, { delayMs: 30 });
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 45);
    const d = wellFormed(await run(p, request(), ac.signal));
    expect(d.finish).toEqual({ kind: 'aborted' });
  });
});

describe('scripted responses with match', () => {
  test('a response with match answers the request whose first user message contains it, whenever it comes; the others answer in order', async () => {
    const p = createScriptedProvider({
      responses: [{ text: 'parent first' }, { match: 'task B', text: 'for B' }, { match: 'task A', text: 'for A' }, { text: 'parent second' }],
    });
    const text = async (content: string) => (await run(p, request({ messages: [{ role: 'user', content }] }))).assembly.blocks.map((b) => (b.type === 'text' ? b.text : '')).join('');
    expect(await text('the parent')).toBe('parent first');
    expect(await text('do task A please')).toBe('for A');
    expect(await text('the parent again')).toBe('parent second');
    expect(await text('do task B please')).toBe('for B');
    expect((await run(p)).finish).toMatchObject({ kind: 'error', code: 'EMPTY_RESPONSE' });
  });
});

describe('createScriptedProviderFromFunction', () => {
  test('reacts to the request: call a tool until three results are back, then answer', async () => {
    const p = createScriptedProviderFromFunction((req, index) => {
      const results = req.messages.filter((m) => m.role === 'tool').length;
      return results < 3 ? { toolCalls: [{ name: 'noop', arguments: { n: index } }] } : { text: `done after ${results}` };
    });
    const messages: import('../../log/messages.js').ModelMessage[] = [{ role: 'user', content: 'go' }];
    for (;;) {
      const d = wellFormed(await run(p, request({ messages: [...messages] })));
      const call = d.assembly.blocks.find((b) => b.type === 'tool-call');
      if (!call || call.type !== 'tool-call') {
        expect(d.assembly.blocks).toEqual([{ type: 'text', text: 'done after 3' }]);
        break;
      }
      messages.push({ role: 'assistant', content: null, toolCalls: [call] }, { role: 'tool', toolCallId: call.id, content: 'ok' });
    }
    expect(p.calls).toBe(4);
  });

  test('undefined is exhaustion; a throwing or rejecting function is UNKNOWN, never a throw', async () => {
    expect((await run(createScriptedProviderFromFunction(() => undefined))).finish).toMatchObject({
      code: 'EMPTY_RESPONSE',
      message: 'scripted model: script exhausted after 0 responses',
    });
    const throws = createScriptedProviderFromFunction(() => {
      throw new Error('bug in test');
    });
    expect(wellFormed(await run(throws)).finish).toMatchObject({ kind: 'error', code: 'UNKNOWN', message: expect.stringContaining('bug in test') });
    const rejects = createScriptedProviderFromFunction(async () => Promise.reject(new Error('async bug')));
    expect(wellFormed(await run(rejects)).finish).toMatchObject({ code: 'UNKNOWN' });
  });
});

describe('loadScript', () => {
  const dir = tempDir('bridle-scripted-');
  const file = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };

  test('reads and validates a script file', () => {
    const path = file('ok.json', JSON.stringify(script));
    expect(loadScript(path)).toEqual(script);
  });

  test('a missing file, bad JSON and a bad shape each give a ScriptError naming the problem', () => {
    expect(() => loadScript(join(dir, 'nope.json'))).toThrow(ScriptError);
    expect(() => loadScript(join(dir, 'nope.json'))).toThrow(/cannot read script .*nope\.json/);
    expect(() => loadScript(file('bad.json', '{ "responses": [ }'))).toThrow(/bad\.json is not valid JSON/);
    const shape = file('shape.json', JSON.stringify({ responses: [{ tool_calls: [] }, { error: { code: 'NOPE' } }, { text: 'x', error: { code: 'AUTH' } }, { toolCalls: [{ name: 'a', arguments: 3 }] }] }));
    let message = '';
    try {
      loadScript(shape);
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain('shape.json is not a valid scripted-model script');
    expect(message).toContain('Unrecognized key: "tool_calls"');
    expect(message).toContain('responses[1].error.code');
    expect(message).toContain('cannot also carry');
    expect(message).toContain('arguments must be a JSON object or a string');
  });

  test('createScriptedProvider refuses an invalid script object at construction', () => {
    expect(() => createScriptedProvider({ responses: [{ finish: 'done' }] } as unknown as Script)).toThrow(ScriptError);
  });
});

test('the example in SCRIPTED.md is a valid script', async () => {
  const { readFileSync } = await import('node:fs');
  const { parseScript } = await import('./scripted-script.js');
  const md = readFileSync(new URL('./SCRIPTED.md', import.meta.url), 'utf8');
  const json = /```json\n([\s\S]*?)```/.exec(md)?.[1];
  expect(json).toBeDefined();
  const parsed = parseScript(JSON.parse(json!));
  expect(parsed.responses).toHaveLength(4);
  const d = wellFormed(await run(createScriptedProvider(parsed)));
  expect(d.assembly.blocks.map((b) => b.type)).toEqual(['reasoning', 'text', 'tool-call']);
});
