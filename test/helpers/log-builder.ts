/**
 * Builds session logs by hand for unit tests of verify and repair: the same
 * entries the machines write, stamped by a real Recorder on a memory store.
 */
import { createMemoryStore } from '../../adapters/store/memory.js';
import type { Block, StepEndReason, ToolResultStatus, TurnEndReason } from '../../log/entry-values.js';
import type { Draft, Entry } from '../../log/entries.js';
import { LOG_FORMAT } from '../../log/entries-session.js';
import { Recorder } from '../../log/recorder.js';

export class LogBuilder {
  readonly recorder = new Recorder(createMemoryStore(), (() => {
    let t = Date.UTC(2026, 0, 1);
    return () => t++;
  })());
  private turnNo = 0;
  private stepNo = 0;
  private answerNo = 0;
  private blocks: Block[] = [];

  constructor() {
    this.add({ kind: 'session/start', id: 's', cwd: '/ws', model: 'm', depth: 0, parent: null, format: LOG_FORMAT });
  }

  get entries(): Entry[] {
    return this.recorder.entries.slice();
  }
  get turn(): string {
    return `t${this.turnNo}`;
  }
  get step(): string {
    return `${this.turn}.s${this.stepNo}`;
  }

  add(d: Draft): this {
    this.recorder.append(d);
    return this;
  }

  startTurn(input = 'do it'): this {
    this.turnNo++;
    this.stepNo = 0;
    // Format 2: the input is logged as it arrives, and the turn names it (ADR 0021).
    const from = this.recorder.append({ kind: 'session/input', mode: 'followup', text: input, origin: 'user' }).seq;
    this.add({ kind: 'turn/start', turn: this.turn, input, from });
    return this.add({ kind: 'user/message', turn: this.turn, text: input, origin: 'user', surfaceOp: 'append' });
  }

  startStep(): this {
    this.stepNo++;
    return this.add({ kind: 'step/start', turn: this.turn, step: this.step });
  }

  /** The answer, then (by default) its tool/call entries, as the step machine logs them. */
  answer(text: string, calls: { name: string; args?: object }[] = [], logCalls = calls.length): this {
    const n = this.answerNo++;
    this.blocks = calls.map((c, i) => ({ type: 'tool-call', id: `call_${n}_${i}`, name: c.name, arguments: JSON.stringify(c.args ?? {}) }));
    const blocks: Block[] = [...(text ? [{ type: 'text' as const, text }] : []), ...this.blocks];
    this.add({ kind: 'assistant/message', turn: this.turn, step: this.step, blocks, finish: { kind: 'ok', reason: calls.length ? 'tool-calls' : 'stop' }, surfaceOp: 'append' });
    this.blocks.slice(0, logCalls).forEach((_, i) => this.call(i + 1));
    return this;
  }

  call(k: number): this {
    const b = this.blocks[k - 1] as Extract<Block, { type: 'tool-call' }>;
    return this.add({ kind: 'tool/call', turn: this.turn, step: this.step, callId: `${this.step}.c${k}`, toolCallId: b.id, name: b.name, arguments: b.arguments });
  }

  dispatch(k: number, idempotent = false): this {
    const b = this.blocks[k - 1] as Extract<Block, { type: 'tool-call' }>;
    return this.add({ kind: 'tool/dispatch', turn: this.turn, step: this.step, callId: `${this.step}.c${k}`, name: b.name, idempotent });
  }

  result(k: number, status: ToolResultStatus = 'ok', content = 'done', code?: string): this {
    const b = this.blocks[k - 1] as Extract<Block, { type: 'tool-call' }>;
    const d: Draft = { kind: 'tool/result', turn: this.turn, step: this.step, callId: `${this.step}.c${k}`, toolCallId: b.id, name: b.name, status, content, surfaceOp: 'append' };
    if (code) d.code = code;
    return this.add(d);
  }

  endStep(reason: StepEndReason = 'stop'): this {
    return this.add({ kind: 'step/end', turn: this.turn, step: this.step, reason });
  }

  endTurn(reason: TurnEndReason = 'completed'): this {
    return this.add({ kind: 'turn/end', turn: this.turn, reason, steps: this.stepNo });
  }

  /** A whole clean turn: one step calling `bash` (dispatched, ok), one answering. */
  cleanTurn(input = 'do it'): this {
    this.startTurn(input).startStep().answer('running', [{ name: 'bash', args: { command: 'true' } }]).dispatch(1).result(1).endStep('tool-calls');
    return this.startStep().answer('done').endStep('stop').endTurn('completed');
  }
}

/** The log as text, the way the JSONL store writes it. */
export const logText = (entries: readonly Entry[]) => entries.map((e) => JSON.stringify(e)).join('\n') + '\n';
