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
