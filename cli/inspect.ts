/**
 * `--inspect [url]`: every actor of a session (session, turns, steps, tool
 * calls) reported to a Stately inspector over WebSocket through
 * `@statelyai/inspect`'s `createWebSocketInspector`. The inspector server
 * must already listen; bridle checks it first, so a wrong URL is one clear
 * error instead of a silent reconnect loop.
 */
import { createWebSocketInspector } from '@statelyai/inspect';
import { WebSocket } from 'ws';
import type { InspectionEvent, Observer } from 'xstate';
import { redactText, redactUrl } from '../safety/redact.js';
import { SetupError, UsageError } from './errors.js';

export const DEFAULT_INSPECT_URL = 'ws://localhost:8080';

export interface OpenInspector {
  readonly url: string;
  readonly inspect: Observer<InspectionEvent>;
  /** Contract: waits (bounded) until every event so far has been sent, then disconnects; never rejects. */
  close(): Promise<void>;
}

/** `--inspect` alone means the default; `--inspect <url>` names one. */
export function inspectUrl(flag: string | boolean | undefined): string | undefined {
  if (flag === undefined || flag === false) return undefined;
  const url = flag === true ? DEFAULT_INSPECT_URL : flag;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`--inspect: not a URL: ${redactText(url)}`);
  }
  if (parsed.protocol !== 'ws:' && parsed.protocol !== 'wss:') throw new UsageError(`--inspect: needs a ws:// or wss:// URL (got ${redactUrl(url)})`);
  return url;
}

function reachable(url: string, timeoutMs: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url);
    const done = (problem: string | undefined) => {
      clearTimeout(timer);
      ws.removeAllListeners();
      ws.on('error', () => undefined);
      ws.terminate();
      resolve(problem);
    };
    const timer = setTimeout(() => done(`no answer within ${timeoutMs} ms`), timeoutMs);
    ws.once('open', () => done(undefined));
    ws.once('error', (err) => done(err.message));
  });
}

/** The adapter's connection state; `@statelyai/inspect` keeps it private, so read it narrowly. */
interface AdapterState {
  status?: string;
  ws?: { bufferedAmount?: number };
  deferredEvents?: unknown[];
}

/** Contract: resolves connected (or throws `SetupError` naming the URL); events are buffered until the socket opens, none dropped. */
export async function openInspector(url: string): Promise<OpenInspector> {
  const problem = await reachable(url, 3000);
  if (problem) throw new SetupError(`--inspect: no inspector listening at ${redactUrl(url)} (${problem}); start one first (see docs/inspection.md)`);
  const inspector = createWebSocketInspector({ url, maxDeferredEvents: 1_000_000 });
  const state = inspector.adapter as unknown as AdapterState;
  const settled = () => state.status === 'open' && (state.ws?.bufferedAmount ?? 0) === 0;
  return {
    url,
    inspect: inspector.inspect,
    close: async () => {
      // The inspector converts events on a timer (setTimeout 0): let the last ones through first.
      const deadline = Date.now() + 3000;
      await new Promise((r) => setTimeout(r, 20));
      while (!settled() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      await new Promise((r) => setTimeout(r, 20));
      inspector.stop();
    },
  };
}

/** Runs `fn` with an inspector when `--inspect` was given, and disconnects it (after the last event) when `fn` is done. */
export async function withInspector<T>(flag: string | boolean | undefined, fn: (inspect: Observer<InspectionEvent> | undefined) => Promise<T>): Promise<T> {
  const url = inspectUrl(flag);
  if (!url) return fn(undefined);
  const inspector = await openInspector(url);
  process.stderr.write(`inspect: reporting every actor to ${redactUrl(url)}\n`);
  try {
    return await fn(inspector.inspect);
  } finally {
    await inspector.close();
  }
}
