/**
 * The `acp-client` file system: file contents go through the editor that
 * drives the session over ACP (`fs/read_text_file`, `fs/write_text_file`),
 * so the model reads unsaved buffers and the editor sees, and can show,
 * every write. Where a path is, what it is and what a directory holds are
 * still the `local` provider's to answer over the same workspace: every path
 * is confined and checked on this machine exactly as without a client
 * (`realpath`, the protected paths, the hard-link and special-file refusals),
 * and only then are its bytes asked of, or handed to, the client.
 *
 * What goes where is fixed by the config and the client's capabilities, not
 * guessed: reads go to the client when it offers `readTextFile`, writes when
 * it offers `writeTextFile`; a file the client would have to send whole past
 * `maxClientBytes`, or one that is not text (a NUL in its first 8 KiB), is
 * read from the disk, since `fs/read_text_file` carries text only. A client
 * offering neither is refused at mount.
 */
import { isUtf8 } from 'node:buffer';
import { z } from 'zod';
import { ACP_RESOURCE_NOT_FOUND, AcpClientError, type AcpClient } from '../../ports/acp-client.js';
import { FsCode, FsIoError, readAtMost, type FileHandle, type FileSystem, type FsPath } from '../../ports/fs.js';
import { ACP_CLIENT, FS, SESSION } from '../../ports/index.js';
import { defineProvider, ProviderSetupError } from '../../ports/provider.js';
import { ToolError } from '../../ports/tool-error.js';
import { LocalFsConfig, localFsProvider } from './local.js';

export const AcpClientFsConfig = LocalFsConfig.extend({
  maxClientBytes: z
    .int()
    .positive()
    .default(8 * 1024 * 1024)
    .describe('Files larger than this (on disk) are read from the disk: the client would have to send them whole, in one message.'),
});
export type AcpClientFsConfig = z.infer<typeof AcpClientFsConfig>;

/** How much of a file is looked at to tell text (which the client can carry) from binary (which it cannot). */
const SNIFF_BYTES = 8192;

/** The client's failure as the fs port words failures: a missing file is `NOT_FOUND`, anything else `CLIENT_FAILED`. */
function clientFailure(err: unknown, shown: string, doing: string): ToolError {
  if (err instanceof ToolError) return err;
  if (err instanceof AcpClientError && err.code === ACP_RESOURCE_NOT_FOUND) return new FsIoError(FsCode.NOT_FOUND, `"${shown}" does not exist (the editor says).`);
  return new FsIoError(FsCode.CLIENT_FAILED, `The editor could not ${doing} "${shown}": ${(err as Error).message}`);
}

async function viaClient<T>(shown: string, doing: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw clientFailure(err, shown, doing);
  }
}

/** A handle over bytes already in memory, read by position like any other. */
function bytesHandle(bytes: Uint8Array): FileHandle {
  return {
    size: bytes.length,
    read: async (position, length) => bytes.subarray(Math.min(position, bytes.length), Math.min(position + length, bytes.length)),
    close: async () => undefined,
  };
}

const encoder = new TextEncoder();

export interface AcpClientFsOptions {
  /** The confinement and the listings: the `local` provider over the session's workspace. */
  local: FileSystem;
  client: AcpClient;
  maxClientBytes: number;
}

/** Opens locally (every check), then decides whether the client should be asked for the bytes instead. */
async function readable(o: AcpClientFsOptions, p: FsPath): Promise<{ local: FileHandle; viaClient: boolean }> {
  const handle = await o.local.open(p);
  if (!o.client.capabilities.readTextFile || handle.size > o.maxClientBytes) return { local: handle, viaClient: false };
  const head = await handle.read(0, Math.min(handle.size, SNIFF_BYTES));
  return { local: handle, viaClient: !head.includes(0) };
}

/** The checks a local write of `p` would make (kind, hard links, confinement), without writing; creates a missing file (and its parents) empty. */
async function prepareWrite(local: FileSystem, p: FsPath, signal?: AbortSignal): Promise<{ created: boolean }> {
  const exists = await local.stat(p).then(
    () => true,
    (err: unknown) => {
      if (err instanceof ToolError && err.code === FsCode.NOT_FOUND) return false;
      throw err;
    },
  );
  if (!exists) return local.write(p, new Uint8Array(0), signal);
  await checkExisting(local, p, signal);
  return { created: false };
}

/** What a local update of an existing file checks (kind, hard links, confinement, protection): a zero-byte budget reads at most one byte and never writes. */
async function checkExisting(local: FileSystem, p: FsPath, signal?: AbortSignal): Promise<void> {
  await local.update(p, { maxBytes: 0, ...(signal ? { signal } : {}) }, () => undefined);
}

/** Contract: as the fs port; every refusal the local provider makes is made first, before the client is asked anything. */
export function createAcpClientFs(o: AcpClientFsOptions): FileSystem {
  const { local, client } = o;
  const reads = client.capabilities.readTextFile;
  const writes = client.capabilities.writeTextFile;
  return {
    id: `acp-client(${client.name})`,
    root: local.root,
    realpath: (path, intent) => local.realpath(path, intent),
    stat: (p) => local.stat(p),
    list: (p) => local.list(p),
    walk: (p, options) => local.walk(p, options),

    async open(p) {
      const r = await readable(o, p);
      if (!r.viaClient) return r.local;
      await r.local.close();
      const text = await viaClient(p.shown, 'read', () => client.readTextFile(p.at));
      return bytesHandle(encoder.encode(text));
    },

    async write(p, bytes, signal) {
      // The client carries text: bytes that are not UTF-8 are written as they are, here.
      if (!writes || !isUtf8(bytes)) return local.write(p, bytes, signal);
      const { created } = await prepareWrite(local, p, signal);
      await viaClient(p.shown, 'write', () => client.writeTextFile(p.at, Buffer.from(bytes).toString('utf8'), signal));
      return { created };
    },

    async update(p, options, change) {
      if (!reads && !writes) return local.update(p, options, change);
      await checkExisting(local, p, options.signal);
      const r = await readable(o, p);
      let current: Uint8Array | undefined;
      if (r.viaClient) {
        await r.local.close();
        current = encoder.encode(await viaClient(p.shown, 'read', () => client.readTextFile(p.at, options.signal)));
        if (current.length > options.maxBytes) return 'too-large';
      } else {
        try {
          current = await readAtMost(r.local, options.maxBytes, options.signal);
        } finally {
          await r.local.close();
        }
        if (current === undefined) return 'too-large';
      }
      const next = change(current);
      if (next === undefined) return 'unchanged';
      if (writes && isUtf8(next)) await viaClient(p.shown, 'write', () => client.writeTextFile(p.at, Buffer.from(next).toString('utf8'), options.signal));
      else await local.write(p, next, options.signal);
      return 'replaced';
    },
  };
}

export const acpClientFsProvider = defineProvider({
  seam: FS,
  name: 'acp-client',
  config: AcpClientFsConfig,
  inject: [SESSION, ACP_CLIENT],
  create: (c, services) => {
    const client = services.get(ACP_CLIENT);
    if (!client.capabilities.readTextFile && !client.capabilities.writeTextFile) {
      throw new ProviderSetupError(`the ACP client ${client.name} offers neither fs/read_text_file nor fs/write_text_file; use the local fs row instead`);
    }
    const { maxClientBytes, ...localConfig } = c;
    return createAcpClientFs({ local: localFsProvider.create(localConfig, services), client, maxClientBytes });
  },
});
