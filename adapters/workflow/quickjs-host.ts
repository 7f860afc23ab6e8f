/**
 * The worker thread's side of a workflow run: it hosts one QuickJS VM (a
 * WebAssembly JS engine) and evaluates the script ONLY in there. Nothing of
 * the host is passed in: the VM's globals are the language's own intrinsics
 * (no `process`, `require`, module loader, `fetch`, file or network API),
 * plus the combinators of `script-runtime.ts` (evaluated inside the VM, as
 * a prelude) and a `setTimeout`/`clearTimeout` pair that only delays (ADR
 * 0037). The VM reaches out through one host function, `send(text)`, which
 * carries a JSON message to the worker's port; answers come back through
 * `deliver(text)`. `send` and `deliver` are arguments of the glue function,
 * never globals, so the script cannot name them.
 *
 * Bounds: the VM's linear memory is a `WebAssembly.Memory` with a maximum,
 * so every allocation of the script (ArrayBuffers included: QuickJS's own
 * malloc limit does not count them) fails past `memoryBytes`; QuickJS's own
 * limit and stack size make the usual cases an ordinary `out of memory` or
 * `stack overflow`; an interrupt handler stops it at its deadline. The main
 * thread's deadline and `worker.terminate()` stay as the backstop.
 *
 * `quickjsHost` is self-contained — it refers to nothing outside its own
 * body — because its source text is what the worker evaluates (`worker.ts`).
 */
import type { QuickJSContext, QuickJSHandle, QuickJSRuntime, QuickJSSyncVariant, newQuickJSWASMModuleFromVariant, newVariant } from 'quickjs-emscripten-core';

/** The little of WebAssembly used here: the project's `lib` declares none of it, the runtime has it. */
export interface WasmMemory {
  readonly buffer: ArrayBuffer;
}
export type WasmModule = object;
export interface WasmApi {
  Memory: new (d: { initial: number; maximum: number }) => WasmMemory;
  compile(bytes: Uint8Array): Promise<WasmModule>;
}
declare const WebAssembly: WasmApi;

export interface HostPort {
  postMessage(message: unknown): void;
  on(event: 'message', listener: (message: any) => void): unknown;
}

export interface HostData {
  script: string;
  maxAgents: number;
  maxResultChars: number;
  /** The VM's whole linear memory, in bytes (a multiple of 64 KiB). */
  memoryBytes: number;
  /** QuickJS's stack limit, in bytes. */
  stackBytes: number;
  /** How long the script may run once the VM is ready (the host posts `ready` then); the interrupt handler stops it there. */
  deadlineMs: number;
  /** The source of `scriptRuntime`, evaluated inside the VM. */
  runtimeSource: string;
  /** `GLUE`, evaluated inside the VM. */
  glueSource: string;
  /** The engine, compiled once by the main thread (a Module is cloned, not recompiled, into each worker). */
  wasmModule?: WasmModule;
}

export interface HostEngine {
  newQuickJSWASMModuleFromVariant: typeof newQuickJSWASMModuleFromVariant;
  newVariant: typeof newVariant;
}

/**
 * Contract: posts exactly one `done` message (the script's own, or a named
 * error: WORKFLOW_DEADLINE, WORKFLOW_MEMORY_LIMIT, WORKFLOW_SCRIPT_ERROR,
 * WORKFLOW_WORKER_CRASHED), then disposes the VM; never throws.
 */
export async function quickjsHost(port: HostPort, data: HostData, engine: HostEngine, variant: QuickJSSyncVariant): Promise<void> {
  let finished = false;
  let deadlineAt = Number.POSITIVE_INFINITY;
  let rt: QuickJSRuntime | undefined;
  let ctx: QuickJSContext | undefined;
  const handles: QuickJSHandle[] = [];
  const timers = new Map<number, ReturnType<typeof setTimeout>>();
  let memory: WasmMemory | undefined;
  let deliver: QuickJSHandle | undefined;
  let fire: QuickJSHandle | undefined;

  const dispose = () => {
    for (const t of timers.values()) clearTimeout(t);
    timers.clear();
    try {
      for (const h of handles.splice(0)) if (h.alive) h.dispose();
      ctx?.dispose();
      rt?.dispose();
    } catch {
      // A VM that ran out of memory may fail to free; the worker is terminated right after.
    }
    ctx = undefined;
    rt = undefined;
  };
  const done = (m: Record<string, unknown>) => {
    if (finished) return;
    finished = true;
    port.postMessage({ type: 'done', ...m });
    // Often called from inside the VM (the runtime's `send`): free it once that call has returned.
    queueMicrotask(dispose);
  };
  /** The linear memory never shrinks: its size is the script's high-water mark. */
  const memoryFull = (share = 1) => !!memory && memory.buffer.byteLength >= share * data.memoryBytes - 1024 * 1024;
  const limitBytes = Math.max(4 << 20, data.memoryBytes - (8 << 20));
  /**
   * Out of memory, QuickJS may not even build its error: it throws `null`.
   * That with the VM's own count of bytes in use near its limit, or a
   * linear memory that grew to most of its maximum, is the memory limit (the
   * garbage may be collected by the time the error is read); anything else
   * the script threw is its own error.
   */
  const outOfMemory = (message: string) => {
    if (/out of memory/i.test(message)) return true;
    if (message !== '' && message !== 'null' && message !== 'undefined') return false;
    if (memoryFull(0.75)) return true;
    try {
      const h = rt!.computeMemoryUsage();
      const used = (ctx!.dump(h) as { memory_used_size?: number }).memory_used_size ?? 0;
      h.dispose();
      return used >= limitBytes / 2;
    } catch {
      return true;
    }
  };
  /** A failure that came out of the VM (or the runtime's own catch-all): name what ended it. */
  const failed = (what: unknown) => {
    const message = what && typeof what === 'object' && 'message' in what ? String((what as { message: unknown }).message) : String(what ?? '');
    if (message === 'interrupted' || Date.now() >= deadlineAt) return done({ ok: false, category: 'fatal', code: 'WORKFLOW_DEADLINE', message: `the script ran past its deadline of ${data.deadlineMs} ms and was stopped` });
    if (outOfMemory(message)) return done({ ok: false, category: 'fatal', code: 'WORKFLOW_MEMORY_LIMIT', message: `the script used more than its ${data.memoryBytes >> 20} MiB of memory and was stopped` });
    done({ ok: false, category: 'fatal', code: 'WORKFLOW_SCRIPT_ERROR', message: message || 'the script failed' });
  };
  /** Reads a call's result: a thrown value ends the run, a returned handle is disposed. */
  const settle = (r: { error?: QuickJSHandle; value?: QuickJSHandle }) => {
    if (r.error) {
      let dumped: unknown;
      try {
        dumped = ctx!.dump(r.error);
      } catch {
        dumped = undefined;
      }
      r.error.dispose();
      failed(dumped);
      return false;
    }
    r.value?.dispose();
    return true;
  };
  /** Runs every job the last entry queued (promise reactions: the script's awaits). */
  const drain = () => {
    if (finished || !rt) return;
    const r = rt.executePendingJobs(-1);
    if (r.error) settle({ error: r.error });
  };
  /** Enters the VM through one of the glue's functions, with a string argument. */
  const enter = (fn: QuickJSHandle | undefined, arg: string | number) => {
    if (finished || !ctx || !fn) return;
    const a = typeof arg === 'string' ? ctx.newString(arg) : ctx.newNumber(arg);
    try {
      if (settle(ctx.callFunction(fn, ctx.undefined, a))) drain();
    } catch (err) {
      trapped(err);
    } finally {
      if (a.alive) a.dispose();
    }
  };
  /** A wasm trap (the engine's own stack, an allocation that aborted) or a host failure. */
  const trapped = (err: unknown) => {
    if (memoryFull()) return failed({ message: 'out of memory' });
    done({ ok: false, category: 'fatal', code: 'WORKFLOW_WORKER_CRASHED', message: `the script runtime failed: ${(err as Error)?.message ?? String(err)}` });
  };

  try {
    const pages = Math.floor(data.memoryBytes / 65536);
    memory = new WebAssembly.Memory({ initial: Math.min(256, pages), maximum: pages });
    const mod = await engine.newQuickJSWASMModuleFromVariant(engine.newVariant(variant, { wasmMemory: memory, ...(data.wasmModule ? { wasmModule: data.wasmModule } : {}) }));
    rt = mod.newRuntime();
    // QuickJS's own accounting fails first for ordinary objects, leaving room to build the error.
    rt.setMemoryLimit(limitBytes);
    rt.setMaxStackSize(data.stackBytes);
    rt.setInterruptHandler(() => Date.now() >= deadlineAt);
    ctx = rt.newContext();
    // The script's clock starts now: loading the engine is not the script's time.
    deadlineAt = Date.now() + data.deadlineMs;
    // A script that waits (on agents, on timers) runs no code to interrupt: this ends it at the deadline.
    const deadline = setTimeout(() => failed({ message: 'interrupted' }), data.deadlineMs);
    timers.set(-1, deadline);
    port.postMessage({ type: 'ready' });
    const c = ctx;

    const send = c.newFunction('send', (text) => {
      let m: any;
      try {
        m = JSON.parse(c.getString(text));
      } catch {
        return;
      }
      if (!m || typeof m !== 'object') return;
      if (m.type === 'done') {
        // An out-of-memory error caught by the runtime's own handler still names the limit.
        if (m.ok === false && m.code === 'WORKFLOW_SCRIPT_ERROR') return failed(m);
        return done(m);
      }
      if (m.type === 'agent') port.postMessage(m);
    });
    const arm = c.newFunction('arm', (idH, msH) => {
      const id = c.getNumber(idH);
      const ms = Math.max(0, c.getNumber(msH) || 0);
      // A timer due after the deadline would never run: the deadline ends the script first.
      if (Date.now() + ms >= deadlineAt) return;
      timers.set(
        id,
        setTimeout(() => {
          timers.delete(id);
          enter(fire, id);
        }, ms),
      );
    });
    const disarm = c.newFunction('disarm', (idH) => {
      const id = c.getNumber(idH);
      clearTimeout(timers.get(id));
      timers.delete(id);
    });
    handles.push(send, arm, disarm);

    const glue = c.evalCode(data.glueSource, 'bridle:glue.js');
    if (glue.error) return void settle({ error: glue.error });
    handles.push(glue.value);
    const rtFn = c.evalCode(`(${data.runtimeSource})`, 'bridle:runtime.js');
    if (rtFn.error) return void settle({ error: rtFn.error });
    handles.push(rtFn.value);
    const dataText = c.newString(JSON.stringify({ script: data.script, maxAgents: data.maxAgents, maxResultChars: data.maxResultChars }));
    handles.push(dataText);
    const made = c.callFunction(glue.value, c.undefined, send, arm, disarm, rtFn.value, dataText);
    if (made.error) return void settle({ error: made.error });
    handles.push(made.value);
    deliver = c.getProp(made.value, 'deliver');
    fire = c.getProp(made.value, 'fire');
    handles.push(deliver, fire);
    drain();

    port.on('message', (m: unknown) => {
      if (!finished) enter(deliver, JSON.stringify(m));
    });
  } catch (err) {
    trapped(err);
  }
}

/**
 * Evaluated inside the VM, strict: builds the port the runtime talks
 * through over `send`, installs the delay-only timers (at most 1,000
 * pending; their clock is the host's, capped at the deadline), starts the
 * runtime, and returns the two entry points the host calls. What it closes
 * over is out of the script's reach: the script body is compiled by the
 * runtime at global scope.
 */
export const GLUE = `(function (send, arm, disarm, runtime, dataText) {
  'use strict';
  let listener = () => undefined;
  const stringify = JSON.stringify, parse = JSON.parse;
  const port = { postMessage: (m) => send(stringify(m)), on: (_e, l) => { listener = l; } };
  const pending = new Map();
  let next = 0;
  const define = (name, value) => Object.defineProperty(globalThis, name, { value, writable: true, configurable: true, enumerable: false });
  define('setTimeout', (fn, ms, ...args) => {
    if (typeof fn !== 'function') throw new TypeError('setTimeout(fn, ms): fn must be a function');
    if (pending.size >= 1000) throw new RangeError('setTimeout: more than 1000 timers pending');
    const id = ++next;
    pending.set(id, () => fn(...args));
    arm(id, Number(ms) || 0);
    return id;
  });
  define('clearTimeout', (id) => { if (pending.delete(id)) disarm(id); });
  runtime(port, parse(dataText));
  return {
    deliver: (text) => listener(parse(text)),
    fire: (id) => { const f = pending.get(id); pending.delete(id); if (f) f(); },
  };
})`;
