import { describe, expect, it } from 'vitest';
import { createMemoryStore } from '../adapters/store/memory.js';
import { Recorder } from '../log/recorder.js';
import type { StepEvent } from '../machines/step.machine.js';
import { prepareRequestAction, type HeaderParts } from './prepare-request.js';

const parts = (system: string): HeaderParts => ({ system, tools: [], params: { model: 'm' } });

function setup(header: () => HeaderParts) {
  const recorder = new Recorder(createMemoryStore(), () => 0);
  const sent: StepEvent[] = [];
  const prepare = prepareRequestAction(recorder, header);
  const run = (step: string) => prepare({ self: { send: (e) => void sent.push(e) } }, { turn: 't1', step });
  return { recorder, sent, run };
}

describe('the prepareRequest action', () => {
  it('answers the step once, synchronously, and logs the header only when it changes', () => {
    let h = parts('be brief');
    const { recorder, sent, run } = setup(() => h);
    run('t1.s1');
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ type: 'step.request.prepared', request: { model: 'm', system: 'be brief', messages: [] } });
    run('t1.s2');
    h = parts('be brief'); // a new object with the same content: compared by content, not logged again
    run('t1.s3');
    h = parts('be briefer');
    run('t1.s4');
    expect(recorder.entries.filter((e) => e.kind === 'request/header').map((e) => (e.kind === 'request/header' ? [e.step, e.system] : []))).toEqual([
      ['t1.s1', 'be brief'],
      ['t1.s4', 'be briefer'],
    ]);
    expect(sent).toHaveLength(4);
  });

  it('answers step.request.failed when the header cannot be built, and logs nothing', () => {
    const { recorder, sent, run } = setup(() => {
      throw new Error('unknown variable {{nope}}');
    });
    run('t1.s1');
    expect(sent).toEqual([{ type: 'step.request.failed', error: 'Error: unknown variable {{nope}}' }]);
    expect(recorder.entries).toEqual([]);
  });
});

describe('a header on a wire that cannot carry the log\'s reasoning (a session whose provider changed)', () => {
  const thought = (provider: 'anthropic' | 'openai-responses') => ({ type: 'reasoning' as const, text: 't', provider, data: { type: 'x' } });
  function answered(recorder: Recorder) {
    recorder.append({ kind: 'user/message', turn: 't1', text: 'go', origin: 'user', surfaceOp: 'append' });
    recorder.append({ kind: 'assistant/message', turn: 't1', step: 't1.s1', blocks: [thought('anthropic'), { type: 'text', text: 'a' }], finish: { kind: 'ok', reason: 'stop' }, surfaceOp: 'append' });
    recorder.append({ kind: 'user/message', turn: 't2', text: 'more', origin: 'user', surfaceOp: 'append' });
    recorder.append({ kind: 'assistant/message', turn: 't2', step: 't2.s1', blocks: [thought('anthropic'), thought('openai-responses'), { type: 'text', text: 'b' }], finish: { kind: 'ok', reason: 'stop' }, surfaceOp: 'append' });
  }
  it('the header names its reasoning wire and logs how many foreign reasoning blocks its request drops', () => {
    const recorder = new Recorder(createMemoryStore(), () => 0);
    answered(recorder);
    const prepare = prepareRequestAction(recorder, () => ({ system: 's', tools: [], params: { model: 'm', reasoning: 'openai-responses' } }));
    prepare({ self: { send: () => {} } }, { turn: 't3', step: 't3.s1' });
    expect(recorder.entries.at(-1)).toMatchObject({ kind: 'request/header', params: { model: 'm', reasoning: 'openai-responses' }, droppedReasoning: 2 });
  });
  it('nothing foreign, nothing said: the header has no droppedReasoning', () => {
    const recorder = new Recorder(createMemoryStore(), () => 0);
    recorder.append({ kind: 'user/message', turn: 't1', text: 'go', origin: 'user', surfaceOp: 'append' });
    recorder.append({ kind: 'assistant/message', turn: 't1', step: 't1.s1', blocks: [thought('anthropic'), { type: 'text', text: 'a' }], finish: { kind: 'ok', reason: 'stop' }, surfaceOp: 'append' });
    const prepare = prepareRequestAction(recorder, () => ({ system: 's', tools: [], params: { model: 'm', reasoning: 'anthropic' } }));
    prepare({ self: { send: () => {} } }, { turn: 't2', step: 't2.s1' });
    const h = recorder.entries.at(-1)!;
    expect(h.kind).toBe('request/header');
    expect('droppedReasoning' in h).toBe(false);
  });
});
