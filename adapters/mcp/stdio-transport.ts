/**
 * bridle's own stdio transport for the MCP client: a server's process,
 * spawned in the workspace, spoken to one JSON-RPC message a line. It
 * exists for one reason: the SDK's `StdioClientTransport` (v2), past
 * `maxBufferSize` without a newline, reports an error and closes the
 * connection, stopping the server; v1 let bridle swap its private read
 * buffer, v2 keeps it private (ADR 0054). This one reads stdout through
 * `CappedReadBuffer`, so an answer too large becomes an error for its call
 * and the server goes on (issue 20, item 8; ADR 0039).
 *
 * It is a plain `Transport` with `stderr` and `pid`, which is how the SDK
 * tells a stdio connection (its version probe then treats silence as a
 * 2025 server, not an outage). Shutdown is the spec's: stdin closed, then
 * SIGTERM, then SIGKILL, 2 s apart, as the SDK's own does.
 *
 * Contract: `start` rejects with the spawn error (its `code`: ENOENT,
 * EACCES) when the process cannot run; `close` is idempotent, never
 * rejects, and resolves once the process has exited or been killed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { PassThrough } from 'node:stream';
import { serializeMessage, type JSONRPCMessage, type Transport } from '@modelcontextprotocol/client';
import { getDefaultEnvironment } from '@modelcontextprotocol/client/stdio';
import { CappedReadBuffer, MAX_MESSAGE_BYTES } from './read-buffer.js';

export interface StdioParams {
  command: string;
  args: readonly string[];
  /** Added to the SDK's short list of harmless variables (HOME, PATH, …): nothing else of bridle's environment. */
  env: Record<string, string>;
  cwd: string;
}

const GRACE_MS = 2000;

export class CappedStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** Whether the process was ever spawned: a start that failed has nothing to wait for. */
  spawned = false;
  /** Resolves once the spawned process has exited and its pipes closed; never, if it was never spawned. */
  readonly ended: Promise<void>;
  private endedNow: () => void = () => undefined;
  private child: ChildProcess | undefined;
  private readonly buffer: CappedReadBuffer;
  private readonly errOut = new PassThrough();

  constructor(
    private readonly params: StdioParams,
    onOversized: (bytes: number) => void,
  ) {
    this.buffer = new CappedReadBuffer(MAX_MESSAGE_BYTES, onOversized);
    this.ended = new Promise<void>((resolve) => (this.endedNow = resolve));
  }

  /** The server's stderr, readable before `start` so its first words are not lost. */
  get stderr(): PassThrough {
    return this.errOut;
  }

  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  start(): Promise<void> {
    if (this.child) throw new Error('this stdio transport was already started');
    return new Promise<void>((resolve, reject) => {
      const child = spawn(this.params.command, [...this.params.args], {
        cwd: this.params.cwd,
        env: { ...getDefaultEnvironment(), ...this.params.env },
        stdio: ['pipe', 'pipe', 'pipe'],
        shell: false,
      });
      this.child = child;
      child.once('error', (err) => {
        if (!this.spawned) return reject(err);
        this.onerror?.(err);
      });
      child.once('spawn', () => {
        this.spawned = true;
        resolve();
      });
      child.once('close', () => {
        this.child = undefined;
        this.endedNow();
        this.onclose?.();
      });
      child.stdin?.on('error', (err) => this.onerror?.(err));
      child.stdout?.on('error', (err) => this.onerror?.(err));
      child.stdout?.on('data', (chunk: Buffer) => {
        this.buffer.append(chunk);
        this.drain();
      });
      child.stderr?.pipe(this.errOut);
    });
  }

  private draining = false;

  private drain(): void {
    if (this.draining) return;
    this.draining = true;
    const step = () => {
      for (;;) {
        let message: JSONRPCMessage | null;
        try {
          message = this.buffer.readMessage();
        } catch (err) {
          // A line that is not JSON-RPC: reported, and the next line is read.
          this.onerror?.(err instanceof Error ? err : new Error(String(err)));
          continue;
        }
        if (message === null) return void (this.draining = false);
        this.onmessage?.(message);
        // The SDK runs a notification's handler a microtask later: what follows waits for it, so a progress
        // report read in one chunk with its call's answer is not taken for one of a finished request (ADR 0065).
        if (!('id' in message)) return void queueMicrotask(step);
      }
    };
    step();
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const stdin = this.child?.stdin;
      if (!stdin || stdin.destroyed) return reject(new Error('the server\'s process is not running'));
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once('drain', resolve);
    });
  }

  async close(): Promise<void> {
    const child = this.child;
    if (child) {
      const wait = () => Promise.race([this.ended, new Promise((r) => setTimeout(r, GRACE_MS).unref())]);
      try {
        child.stdin?.end();
      } catch {}
      await wait();
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await wait();
      }
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
    this.buffer.clear();
  }
}
