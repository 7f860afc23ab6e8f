/**
 * The workflow engine's runtime, in process over a fake port (the course's
 * warm-up: the combinators over a fake `agent()`) and in a real worker
 * thread's QuickJS VM (the error categories, bad scripts, the result check,
 * the host loop left free). What the script cannot reach: isolation.test.ts.
 */
import { describe, expect, it } from 'vitest';
import type { AgentAnswer, AgentCall } from '../../ports/workflow.js';
import { scriptRuntime, type RuntimePort } from './script-runtime.js';
import { createWorkerRunner, WorkerConfig } from './worker.js';

/** A fake agent: answers `"<name>:<ms>"` after `ms`, and logs when each call starts and ends. */
function fakeAgents() {
  const events: string[] = [];
  const agent = (call: AgentCall): Promise<AgentAnswer> => {
    const [name, ms, how] = call.prompt.split(':');
    events.push(`start ${name}`);
    return new Promise((resolve) =>
      setTimeout(() => {
        events.push(`end ${name}`);
        if (how === 'recoverable' || how === 'fatal') resolve({ ok: false, category: how, code: `${how.toUpperCase()}_${name}`, message: `${name} failed` });
        else resolve({ ok: true, value: `report of ${name}` });
      }, Number(ms)),
    );
  };
  return { events, agent };
}

/** The runtime in this process, talking through a fake port to the fake agents. */
function inProcess(script: string) {
  const { events, agent } = fakeAgents();
  let listener: (m: any) => void = () => undefined;
  const done = new Promise<any>((resolve) => {
    const port: RuntimePort = {
      on: (_e, l) => (listener = l),
      postMessage: (m: any) => {
        if (m.type === 'done') return resolve(m);
        if (m.type === 'agent') void agent({ prompt: m.prompt, options: m.options }).then((a) => listener({ type: 'agent-result', id: m.id, ...a }));
      },
    };
    scriptRuntime(port, { script, maxAgents: 64, maxResultChars: 100_000 });
  });
  return { events, done };
}

const runner = (over: Partial<WorkerConfig> = {}) => createWorkerRunner(WorkerConfig.parse({ deadlineMs: 5_000, ...over }));
const run = (script: string, over: Partial<WorkerConfig> = {}, signal = new AbortController().signal) => {
  const { events, agent } = fakeAgents();
  return runner(over).run({ script, agent, signal }).then((outcome) => ({ outcome, events }));
};

describe('parallel() and pipeline() over a fake agent()', () => {
  it('pipeline() genuinely overlaps stages across items while parallel() is a real barrier', async () => {
    const p = inProcess(`
      const out = await pipeline(['a', 'b'],
        (x) => agent(x === 'a' ? 'a1:5' : 'b1:60'),
        (r) => agent(r === 'report of a1' ? 'a2:120' : 'b2:5'));
      return out;`);
    expect((await p.done).json).toBe(JSON.stringify(['report of a2', 'report of b2']));
    // Item a's second stage started while item b was still in its first: the stages overlapped.
    expect(p.events.indexOf('start a2')).toBeLessThan(p.events.indexOf('end b1'));

    const q = inProcess(`
      const rs = await parallel([() => agent('x:5'), () => agent('y:80'), () => agent('z:20')]);
      const after = await agent('after:1');
      return [rs, after];`);
    expect(JSON.parse((await q.done).json)).toEqual([['report of x', 'report of y', 'report of z'], 'report of after']);
    // Nothing after the barrier starts before every thunk has ended.
    expect(q.events.indexOf('start after')).toBeGreaterThan(Math.max(...['end x', 'end y', 'end z'].map((e) => q.events.indexOf(e))));
  });

  it("one item's fatal stage escapes the whole pipeline, while a recoverable one only nulls that item's slot", async () => {
    const soft = inProcess(`return await pipeline(['a', 'b', 'c'], (x) => agent(x === 'b' ? 'b:5:recoverable' : x + ':5'));`);
    expect(JSON.parse((await soft.done).json)).toEqual(['report of a', null, 'report of c']);
    const hard = inProcess(`return await pipeline(['a', 'b', 'c'], (x) => agent(x === 'b' ? 'b:5:fatal' : x + ':50'));`);
    expect(await hard.done).toMatchObject({ ok: false, category: 'fatal', code: 'FATAL_b' });
    const own = inProcess(`return await pipeline([1, 2], (n) => { if (n === 2) throw recoverable('two is odd enough'); return n * 10; });`);
    expect(JSON.parse((await own.done).json)).toEqual([10, null]);
    const thrown = inProcess(`return await parallel([() => 1, () => { throw fatal('no', 'MY_CODE'); }]);`);
    expect(await thrown.done).toMatchObject({ ok: false, category: 'fatal', code: 'MY_CODE', message: 'no' });
  });
});

describe('the worker runner', () => {
  it("a workflow's result must be plain, serializable JSON: a function is the named fatal error WORKFLOW_RESULT_NOT_SERIALIZABLE", async () => {
    const cases: [string, string][] = [
      ['return () => 1;', 'result is a function'],
      ['return { a: [1, { f() {} }] };', 'result.a[1].f is a function'],
      ['return new Map();', 'result is a Map object, not a plain one'],
      ['return { n: NaN };', 'result.n is NaN, which JSON cannot hold'],
      ['const o = {}; o.self = o; return o;', 'result.self refers back to itself (a cycle)'],
      ['return { u: undefined };', 'result.u is undefined'],
    ];
    for (const [script, why] of cases) {
      const { outcome } = await run(script);
      expect(outcome, script).toEqual({ ok: false, category: 'fatal', code: 'WORKFLOW_RESULT_NOT_SERIALIZABLE', message: `the result must be plain JSON: ${why}` });
    }
    expect((await run('return { a: [1, "x", null, true, { b: 2 }] };')).outcome).toEqual({ ok: true, value: { a: [1, 'x', null, true, { b: 2 }] } });
    expect((await run('const x = 1;')).outcome).toEqual({ ok: true, value: null });
    expect((await run('return "x".repeat(200);', { maxResultChars: 100 })).outcome).toMatchObject({ ok: false, code: 'WORKFLOW_RESULT_TOO_LARGE' });
  });

  it('a bad script ends with a named error: a syntax error, a throw, an infinite loop past its deadline, a call to a host power', async () => {
    expect((await run('return (')).outcome).toMatchObject({ ok: false, code: 'WORKFLOW_SYNTAX_ERROR' });
    expect((await run('throw new TypeError("boom")')).outcome).toEqual({ ok: false, category: 'fatal', code: 'WORKFLOW_SCRIPT_ERROR', message: 'boom' });
    const t0 = Date.now();
    expect((await run('while (true) {}', { deadlineMs: 300 })).outcome).toMatchObject({ ok: false, code: 'WORKFLOW_DEADLINE' });
    expect(Date.now() - t0).toBeLessThan(3_000);
    expect((await run('process.exit(3)')).outcome).toEqual({ ok: false, category: 'fatal', code: 'WORKFLOW_SCRIPT_ERROR', message: "'process' is not defined" });
    expect((await run('return await agent(42)')).outcome).toMatchObject({ ok: false, code: 'WORKFLOW_BAD_CALL' });
    expect((await run('for (let i = 0; i < 3; i++) await agent("a:1"); return 1;', { maxAgents: 2 })).outcome).toMatchObject({ ok: false, code: 'WORKFLOW_TOO_MANY_AGENTS' });
  });

  it('runs agents in parallel up to its concurrency, through the host; a cancel stops the script at once', async () => {
    const { outcome, events } = await run(`return await parallel(['a:40', 'b:40', 'c:40'].map((p) => () => agent(p)));`, { concurrency: 2 });
    expect(outcome).toEqual({ ok: true, value: ['report of a', 'report of b', 'report of c'] });
    expect(events.slice(0, 2)).toEqual(['start a', 'start b']);
    expect(events.indexOf('start c')).toBeGreaterThan(events.indexOf('end a'));
    const ctl = new AbortController();
    setTimeout(() => ctl.abort(), 50);
    expect((await run('while (true) {}', {}, ctl.signal)).outcome).toMatchObject({ ok: false, code: 'ABORTED' });
  });

  it('keeps the host loop free: a busy script leaves timers here running', async () => {
    // The session's event loop is not held: a busy script leaves timers here running.
    let ticks = 0;
    const t = setInterval(() => ticks++, 5);
    await run('const end = Date.now() + 200; while (Date.now() < end) {} return 1;');
    clearInterval(t);
    expect(ticks).toBeGreaterThan(5);
  });
});
