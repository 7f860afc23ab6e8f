/**
 * What `bridle serve` and `bridle mcp --http` share about listening: a failed
 * listen said as one line naming the port or host (exit 2), the warning for
 * a bind beyond loopback, and the announcement a client (and a test) reads
 * on stdout — `bridle <command>: <url> (<what>)`, then `token: …`.
 */
import { isLoopbackHost } from '../server/access.js';
import { UsageError } from './errors.js';

/** The server could not listen where it was told (`--port`, `--host`): one line for the user, exit 2. */
export class ListenError extends Error {
  override name = 'ListenError';
}

export function parsePort(v: string | undefined, fallback: number): number {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new UsageError(`--port must be a whole number from 0 to 65535 (got ${JSON.stringify(v)})`);
  return n;
}

/** Contract: pure; the line for a failed listen, naming the port or host and the system's code; undefined for an error that is not one. */
export function listenFailure(err: unknown, host: string, port: number): string | undefined {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (typeof code !== 'string' || (err as { syscall?: string }).syscall !== 'listen') return undefined;
  if (code === 'EADDRINUSE') return `port ${port} is in use (EADDRINUSE): stop what listens there, or pick another with --port (0: any free port)`;
  if (code === 'EACCES') return `port ${port} on ${host} may not be bound by this user (EACCES): pick one above 1023 with --port`;
  if (code === 'EADDRNOTAVAIL') return `${host} is not an address of this machine (EADDRNOTAVAIL): pick another with --host`;
  return `cannot listen on ${host}:${port} (${code})`;
}

/**
 * Contract: resolves with what `listen` resolves; a failed listen runs `cleanup` and throws a `ListenError`
 * with its line; any other failure runs `cleanup` and is thrown on.
 */
export async function listenOrExplain<T>(host: string, port: number, listen: () => Promise<T>, cleanup: () => Promise<void> = async () => undefined): Promise<T> {
  try {
    return await listen();
  } catch (e) {
    await cleanup().catch(() => undefined);
    const line = listenFailure(e, host, port);
    throw line === undefined ? e : new ListenError(line);
  }
}

export interface Announcement {
  command: 'serve' | 'mcp';
  host: string;
  url: string;
  /** What speaks there, in parentheses after the URL. */
  what: string;
  token: string;
  /** The token came from `$BRIDLE_TOKEN`: not printed. */
  tokenFromEnv: boolean;
  /** What someone beyond loopback with the token could do (`run tools in your workspace`). */
  reach: string;
}

/** The non-loopback warning on `err`, then the URL and the token on `out`. */
export function announceListening(a: Announcement, out: NodeJS.WritableStream, err: NodeJS.WritableStream): void {
  if (!isLoopbackHost(a.host)) err.write(`bridle ${a.command}: WARNING: listening on ${a.host}, not loopback: anyone who can reach this address and has the token can ${a.reach}.\n`);
  out.write(`bridle ${a.command}: ${a.url} (${a.what})\n`);
  out.write(`token: ${a.tokenFromEnv ? 'from $BRIDLE_TOKEN' : a.token}\n`);
}
