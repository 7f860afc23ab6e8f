/**
 * An ACP client for tests, on the official SDK's client side (`client()`),
 * recording every `session/update` and permission question; and `bridle acp`
 * as a child process with a stream the SDK reads and writes.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { Readable, Writable } from 'node:stream';
import {
  client,
  methods,
  ndJsonStream,
  type ClientApp,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type SessionNotification,
  type SessionUpdate,
  type Stream,
} from '@agentclientprotocol/sdk';
import { CLI } from './cli.js';

export interface ClientRecord {
  updates: SessionNotification[];
  permissions: RequestPermissionRequest[];
}

export type PermissionAnswer = (req: RequestPermissionRequest, n: number) => RequestPermissionResponse | Promise<RequestPermissionResponse>;

export const choose = (optionId: string): RequestPermissionResponse => ({ outcome: { outcome: 'selected', optionId } });

/** A client that answers permission questions with `answer` (default: allow once). */
export function recordingClient(answer: PermissionAnswer = () => choose('allow-once')): { app: ClientApp; record: ClientRecord } {
  const record: ClientRecord = { updates: [], permissions: [] };
  const app = client({ name: 'bridle-test-client' })
    .onNotification(methods.client.session.update, ({ params }) => void record.updates.push(params))
    .onRequest(methods.client.session.requestPermission, ({ params }) => {
      record.permissions.push(params);
      return answer(params, record.permissions.length - 1);
    });
  return { app, record };
}

/** The updates of one kind, in order. */
export function updatesOf<K extends SessionUpdate['sessionUpdate']>(record: ClientRecord, kind: K): Extract<SessionUpdate, { sessionUpdate: K }>[] {
  return record.updates.map((n) => n.update).filter((u): u is Extract<SessionUpdate, { sessionUpdate: K }> => u.sessionUpdate === kind);
}

/** The text of the message chunks streamed so far. */
export const streamedText = (record: ClientRecord, kind: 'agent_message_chunk' | 'agent_thought_chunk' | 'user_message_chunk' = 'agent_message_chunk') =>
  updatesOf(record, kind)
    .map((u) => (u.content.type === 'text' ? u.content.text : ''))
    .join('');

/** Resolves once `predicate` holds (polled), or rejects after `ms`. */
export async function until(predicate: () => boolean, ms = 10_000, what = 'a condition'): Promise<void> {
  const end = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

export interface AcpChild {
  child: ChildProcessWithoutNullStreams;
  stream: Stream;
  stderr: () => string;
  exited: Promise<number | null>;
  /** Closes the agent's stdin, as an editor does when it is done (the SDK's `connectWith` leaves the stream open), and waits for its exit code. */
  end(): Promise<number | null>;
}

/** `bridle acp …` (the built CLI) as a child process, with its own environment. */
export function spawnAcp(args: string[], env: NodeJS.ProcessEnv): AcpChild {
  const child = spawn(process.execPath, [CLI, 'acp', ...args], { env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const stream = ndJsonStream(Writable.toWeb(child.stdin) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>);
  const end = () => {
    if (!child.stdin.destroyed) child.stdin.end();
    return exited;
  };
  return { child, stream, stderr: () => err, exited, end };
}
