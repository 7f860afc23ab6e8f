/**
 * What an ACP client (an editor) offers the session it drives, as a service
 * providers can inject: its own file reads and writes (unsaved buffers
 * included) and its terminals. The ACP host (`server/acp/`) provides it over
 * the connection; the `acp-client` providers of the fs and subprocess seams
 * (`adapters/fs/acp-client.ts`, `adapters/subprocess/acp-client.ts`) use it.
 * Nothing here knows the protocol's wire format.
 */

/** What the client said it can do, at `initialize`. */
export interface AcpClientCapabilities {
  readTextFile: boolean;
  writeTextFile: boolean;
  terminal: boolean;
}

export interface TerminalRequest {
  command: string;
  args: readonly string[];
  /** Absolute. */
  cwd: string;
  /** The client keeps at most this many bytes of output (the end of it). */
  outputByteLimit: number;
}

export interface TerminalExit {
  exitCode: number | null;
  signal: string | null;
}

export interface TerminalOutput {
  output: string;
  /** The client dropped the beginning to stay under the limit. */
  truncated: boolean;
}

/** One command running in a terminal of the client's. */
export interface AcpTerminal {
  readonly id: string;
  waitForExit(): Promise<TerminalExit>;
  output(): Promise<TerminalOutput>;
  kill(): Promise<void>;
  /** Contract: idempotent; kills the command if it still runs. */
  release(): Promise<void>;
}

/**
 * The client's side, for this session. Contract: every method rejects with
 * an `AcpClientError` when the client answers an error or the connection is
 * gone, never with anything else.
 */
export interface AcpClient {
  /** How the client named itself (`clientInfo.name`), for ids and messages. */
  readonly name: string;
  readonly capabilities: AcpClientCapabilities;
  /** The text of an absolute path, as the editor holds it (unsaved changes included). */
  readTextFile(path: string, signal?: AbortSignal): Promise<string>;
  writeTextFile(path: string, content: string, signal?: AbortSignal): Promise<void>;
  createTerminal(request: TerminalRequest, signal?: AbortSignal): Promise<AcpTerminal>;
}

/** A request to the ACP client failed: it answered with an error (`code`, JSON-RPC's), or went away (no code). */
export class AcpClientError extends Error {
  constructor(
    message: string,
    readonly code?: number,
  ) {
    super(message);
    this.name = 'AcpClientError';
  }
}

/** JSON-RPC's "resource not found", which ACP clients answer for a missing file. */
export const ACP_RESOURCE_NOT_FOUND = -32002;
