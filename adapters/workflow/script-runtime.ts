/**
 * What a workflow script runs inside: `agent`, `parallel`, `pipeline`,
 * `fatal` and `recoverable`, and the check that its result is plain JSON.
 * `scriptRuntime` is self-contained — it refers to nothing outside its own
 * body — because its source text is what the QuickJS VM evaluates, as the
 * prelude of every script (`quickjs-host.ts`); the same function runs
 * in-process over any port, which is how its combinators are tested
 * without a VM. Its counter of `agent()` calls is a courtesy (the error
 * comes early); the limit is the host's (`agent-gate.ts`).
 *
 * The messages: the runtime posts `{ type: 'agent', id, prompt, options }`
 * and expects `{ type: 'agent-result', id, ok, value | category, code,
 * message }`; it ends with one `{ type: 'done', ok: true, json }` or
 * `{ type: 'done', ok: false, category, code, message }`.
 */

/** The side of a message channel the runtime talks through (a worker's `parentPort`, or a test's fake). */
export interface RuntimePort {
  postMessage(message: unknown): void;
  on(event: 'message', listener: (message: any) => void): unknown;
}

export interface RuntimeData {
  script: string;
  /** Most `agent()` calls one script may make. */
  maxAgents: number;
  /** Longest result, in characters of its JSON text. */
  maxResultChars: number;
}

/**
 * Contract: posts exactly one `done` message, whatever the script does
 * (a syntax error, a throw, a result that is not plain JSON); never throws.
 * A script that never settles never posts it: the host's deadline ends it.
 */
export function scriptRuntime(port: RuntimePort, data: RuntimeData): void {
  const tag = (category: string, code: string, message: string) => Object.assign(new Error(message), { workflowCategory: category, workflowCode: code });
  const fatal = (message: unknown, code?: unknown) => tag('fatal', typeof code === 'string' && code ? code : 'WORKFLOW_FATAL', String(message));
  const recoverable = (message: unknown, code?: unknown) => tag('recoverable', typeof code === 'string' && code ? code : 'WORKFLOW_RECOVERABLE', String(message));
  const categoryOf = (e: any): string => (e && typeof e === 'object' && e.workflowCategory === 'recoverable' ? 'recoverable' : 'fatal');
  const codeOf = (e: any): string => (e && typeof e === 'object' && typeof e.workflowCode === 'string' ? e.workflowCode : 'WORKFLOW_SCRIPT_ERROR');
  const messageOf = (e: any): string => (e instanceof Error ? e.message : String(e));

  /** The path of the first value that is not plain JSON, and why; undefined when it all is. */
  const notPlainJson = (value: unknown): string | undefined => {
    const seen = new Set<unknown>();
    const walk = (v: unknown, at: string): string | undefined => {
      if (v === null || typeof v === 'string' || typeof v === 'boolean') return undefined;
      if (typeof v === 'number') return Number.isFinite(v) ? undefined : `${at} is ${String(v)}, which JSON cannot hold`;
      if (typeof v === 'undefined') return `${at} is undefined`;
      if (typeof v === 'function') return `${at} is a function`;
      if (typeof v === 'bigint' || typeof v === 'symbol') return `${at} is a ${typeof v}`;
      if (seen.has(v)) return `${at} refers back to itself (a cycle)`;
      seen.add(v);
      try {
        if (Array.isArray(v)) {
          for (let i = 0; i < v.length; i++) {
            if (!(i in v)) return `${at}[${i}] is a hole`;
            const bad = walk(v[i], `${at}[${i}]`);
            if (bad) return bad;
          }
          return undefined;
        }
        const proto = Object.getPrototypeOf(v);
        if (proto !== Object.prototype && proto !== null) return `${at} is a ${(proto && proto.constructor && proto.constructor.name) || 'non-plain'} object, not a plain one`;
        if (Object.getOwnPropertySymbols(v).length > 0) return `${at} has symbol keys`;
        for (const k of Object.keys(v as object)) {
          const bad = walk((v as Record<string, unknown>)[k], `${at}.${k}`);
          if (bad) return bad;
        }
        return undefined;
      } finally {
        seen.delete(v);
      }
    };
    return walk(value, 'result');
  };

  let calls = 0;
  const waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: unknown) => void }>();
  port.on('message', (m: any) => {
    if (!m || m.type !== 'agent-result') return;
    const w = waiting.get(m.id);
    if (!w) return;
    waiting.delete(m.id);
    if (m.ok) w.resolve(m.value);
    else w.reject(tag(m.category === 'recoverable' ? 'recoverable' : 'fatal', String(m.code), String(m.message)));
  });

  /** One subagent: resolves with its report, rejects with a categorized error (a failed child is recoverable, a refused one fatal). */
  const agent = (prompt: unknown, options: unknown = {}): Promise<unknown> => {
    if (typeof prompt !== 'string' || prompt.trim() === '') return Promise.reject(fatal('agent(prompt, options): prompt must be a non-empty string', 'WORKFLOW_BAD_CALL'));
    const o = (options ?? {}) as Record<string, unknown>;
    if (typeof o !== 'object' || Array.isArray(o)) return Promise.reject(fatal('agent(prompt, options): options must be an object', 'WORKFLOW_BAD_CALL'));
    const unknown = Object.keys(o).filter((k) => k !== 'provider' && k !== 'tools');
    if (unknown.length) return Promise.reject(fatal(`agent(prompt, options): unknown option ${unknown.join(', ')} (known: provider, tools)`, 'WORKFLOW_BAD_CALL'));
    if (o.provider !== undefined && typeof o.provider !== 'string') return Promise.reject(fatal('agent(): options.provider must be a string', 'WORKFLOW_BAD_CALL'));
    if (o.tools !== undefined && !(Array.isArray(o.tools) && o.tools.every((t) => typeof t === 'string'))) return Promise.reject(fatal('agent(): options.tools must be a list of tool names', 'WORKFLOW_BAD_CALL'));
    if (calls >= data.maxAgents) return Promise.reject(fatal(`this workflow asked for more than ${data.maxAgents} agents`, 'WORKFLOW_TOO_MANY_AGENTS'));
    const id = ++calls;
    return new Promise((resolve, reject) => {
      waiting.set(id, { resolve, reject });
      port.postMessage({ type: 'agent', id, prompt, options: { ...(o.provider !== undefined ? { provider: o.provider } : {}), ...(o.tools !== undefined ? { tools: [...(o.tools as string[])] } : {}) } });
    });
  };

  /** A real barrier: resolves once every thunk has settled, in their order; a recoverable failure is null in its slot, a fatal one rejects. */
  const parallel = async (thunks: unknown): Promise<unknown[]> => {
    if (!Array.isArray(thunks) || thunks.some((t) => typeof t !== 'function')) throw fatal('parallel(thunks): thunks must be a list of functions', 'WORKFLOW_BAD_CALL');
    const all = await Promise.allSettled(thunks.map((t: () => unknown) => Promise.resolve().then(t)));
    const bad = all.find((r) => r.status === 'rejected' && categoryOf(r.reason) !== 'recoverable');
    if (bad) throw (bad as PromiseRejectedResult).reason;
    return all.map((r) => (r.status === 'fulfilled' ? r.value : null));
  };

  /**
   * Every item flows through the stages on its own, so stages overlap across
   * items (item 2 may be in stage 1 while item 1 is in stage 2). A
   * recoverable failure nulls that item's slot; a fatal one escapes the whole
   * pipeline at once.
   */
  const pipeline = (items: unknown, ...stages: unknown[]): Promise<unknown[]> => {
    if (!Array.isArray(items)) return Promise.reject(fatal('pipeline(items, ...stages): items must be a list', 'WORKFLOW_BAD_CALL'));
    if (stages.some((s) => typeof s !== 'function')) return Promise.reject(fatal('pipeline(items, ...stages): each stage must be a function', 'WORKFLOW_BAD_CALL'));
    return new Promise((resolve, reject) => {
      const out: unknown[] = new Array(items.length).fill(null);
      let left = items.length;
      if (left === 0) return resolve(out);
      items.forEach(async (item: unknown, i: number) => {
        let v = item;
        try {
          for (const stage of stages as ((v: unknown, i: number) => unknown)[]) v = await stage(v, i);
          out[i] = v;
        } catch (e) {
          if (categoryOf(e) !== 'recoverable') return reject(e);
          out[i] = null;
        }
        if (--left === 0) resolve(out);
      });
    });
  };

  const done = (m: Record<string, unknown>) => port.postMessage({ type: 'done', ...m });
  const fail = (e: unknown, code?: string) => done({ ok: false, category: categoryOf(e), code: code ?? codeOf(e), message: messageOf(e) });
  const AsyncFunction = (async () => undefined).constructor as new (...args: string[]) => (...a: unknown[]) => Promise<unknown>;
  let body: (...a: unknown[]) => Promise<unknown>;
  try {
    body = new AsyncFunction('agent', 'parallel', 'pipeline', 'fatal', 'recoverable', data.script);
  } catch (e) {
    return fail(e, 'WORKFLOW_SYNTAX_ERROR');
  }
  Promise.resolve()
    .then(() => body(agent, parallel, pipeline, fatal, recoverable))
    .then(
      (value) => {
        // A script that returns nothing has returned null.
        const v = value === undefined ? null : value;
        const bad = notPlainJson(v);
        if (bad) return done({ ok: false, category: 'fatal', code: 'WORKFLOW_RESULT_NOT_SERIALIZABLE', message: `the result must be plain JSON: ${bad}` });
        const json = JSON.stringify(v);
        if (json.length > data.maxResultChars) return done({ ok: false, category: 'fatal', code: 'WORKFLOW_RESULT_TOO_LARGE', message: `the result is ${json.length} characters of JSON, more than ${data.maxResultChars}` });
        done({ ok: true, json });
      },
      (e) => fail(e),
    )
    .catch((e) => fail(e));
}
