/**
 * The `local` file system: the workspace on this machine's disk, confined.
 * Every path is resolved the way the kernel would and checked against the
 * workspace, `$BRIDLE_HOME` (spelled and real) and the protected paths
 * (`local-resolve.ts`); every use pins what it opens and checks again where
 * and what it really is, so a swap after the check changes nothing, a FIFO
 * cannot block and a hard link cannot carry a write out (`local-open.ts`,
 * ADR 0011). Linux only: elsewhere every use is `UNSUPPORTED_PLATFORM`.
 *
 * Config: the workspace, the home and the protected paths come from the
 * session, in the row's config (not from a service lookup): they are the
 * confinement itself, so they are stated where `bridle config --dump` shows
 * them and checked once at mount, and the provider stays a function of its
 * config alone.
 */
import { stat, type FileHandle as NodeFileHandle } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { readAtMost, type EntryKind, type FileHandle, type FileSystem, type FsPath, type WalkEntry } from '../../ports/fs.js';
import { FS, SESSION } from '../../ports/index.js';
import { defineProvider } from '../../ports/provider.js';
import { ToolError } from '../../ports/tool-error.js';
import { ioFailure, worded } from './local-errors.js';
import { openForRead, openForUpdate, openForWrite, readDirExactly, replaceContent, type OpenedFile } from './local-open.js';
import { displayPath } from '../../safety/paths.js';
import { bridleHomeForms, resolveInWorkspace, type LocalRoots } from './local-resolve.js';
import { walkFiles } from './local-walk.js';
import { changedWhileListed } from './refusals.js';

const absolute = z.string().refine((p) => path.isAbsolute(p), 'must be an absolute path');

export const LocalFsConfig = z.strictObject({
  workspace: absolute.optional().describe("The workspace root, absolute and real (symlinks resolved): every path is confined to it. Default: the session's."),
  bridleHome: absolute.optional().describe("bridle's home ($BRIDLE_HOME): refused, spelled or reached through a link, even inside the workspace. Default: the session's."),
  protect: z.array(absolute).optional().describe("Paths the tools may read but not write. Default: the workspace's .git, unless gitWritable."),
  gitWritable: z.boolean().default(false).describe("Let the file tools write or create a .git anywhere in the workspace (a hook written there runs on the user's next git command)."),
});
export interface LocalFsOptions {
  workspace: string;
  bridleHome: string;
  protect?: readonly string[];
  /** Refuse writing or creating any `.git` below the workspace. Default true: only the user's --allow-git-writes lifts it. */
  protectGit?: boolean;
}

function kindOf(s: { isFile(): boolean; isDirectory(): boolean; isSymbolicLink(): boolean }): EntryKind {
  return s.isFile() ? 'file' : s.isDirectory() ? 'directory' : s.isSymbolicLink() ? 'symlink' : 'other';
}

/** The port's handle over a descriptor `local-open.ts` opened; reads are positioned, errors worded for `shown`. */
function portHandle(handle: NodeFileHandle, size: number, shown: string): FileHandle {
  let closed: Promise<void> | undefined;
  return {
    size,
    read: (position, length) =>
      worded(shown, async () => {
        const buf = Buffer.allocUnsafe(length);
        const { bytesRead } = await handle.read(buf, 0, length, position);
        return buf.subarray(0, bytesRead);
      }),
    close: () => (closed ??= handle.close()),
  };
}

/** What opening a confined path needs: the roots, and the home's forms found while confining it. */
type OpenContext = LocalRoots & { homes?: readonly string[] };

/** Opens `p` in `ctx` with `how`, runs `use`, always closes; every failure worded for `p`. */
async function withOpened<O extends OpenedFile, T>(ctx: OpenContext, p: FsPath, how: (c: OpenContext) => Promise<O | ToolError>, use: (o: O) => Promise<T>): Promise<T> {
  let opened: O | ToolError | undefined;
  try {
    opened = await how(ctx);
    if (opened instanceof ToolError) throw opened;
    return await use(opened);
  } catch (err) {
    throw ioFailure(err, p.shown);
  } finally {
    if (opened !== undefined && !(opened instanceof ToolError)) await opened.handle.close();
  }
}

/** Contract: builds no state on disk and touches nothing until asked; `workspace` must be absolute and real. */
export function createLocalFs(options: LocalFsOptions): FileSystem {
  const roots: LocalRoots = { workspace: options.workspace, bridleHome: options.bridleHome, protect: options.protect ?? [], protectGit: options.protectGit ?? true };
  // The home's forms found while confining a path, kept with it: a grep opening thousands of walked files spares a realpath each.
  const homesOf = new WeakMap<FsPath, readonly string[]>();
  const place = (at: string, shown: string, homes: readonly string[]): FsPath => {
    const p: FsPath = { at, shown, display: displayPath(roots.workspace, at) };
    homesOf.set(p, homes);
    return p;
  };
  const ctxFor = (p: FsPath): OpenContext => ({ ...roots, ...(homesOf.has(p) ? { homes: homesOf.get(p)! } : {}) });

  return {
    id: 'local',
    root: { at: roots.workspace, shown: '.', display: '.' },

    async realpath(userPath, intent = {}) {
      const homes = await bridleHomeForms(roots.bridleHome);
      const resolved = await resolveInWorkspace({ ...roots, homes }, userPath, intent);
      if (resolved instanceof ToolError) throw resolved;
      return place(resolved, userPath, homes);
    },

    stat: (p) => worded(p.shown, async () => {
      const s = await stat(p.at);
      return { kind: kindOf(s), size: s.size };
    }),

    async open(p) {
      const opened = await worded(p.shown, () => openForRead(ctxFor(p), p.at, p.shown));
      if (opened instanceof ToolError) throw opened;
      return portHandle(opened.handle, opened.size, p.shown);
    },

    write: (p, bytes, signal) =>
      withOpened(ctxFor(p), p, (c) => openForWrite(c, p.at, p.shown), async (o) => {
        await replaceContent(o.handle, bytes, signal);
        return { created: o.created };
      }),

    update: (p, { maxBytes, signal }, change) =>
      withOpened(ctxFor(p), p, (c) => openForUpdate(c, p.at, p.shown), async (o) => {
        const bytes = await readAtMost(portHandle(o.handle, o.size, p.shown), maxBytes, signal);
        if (bytes === undefined) return 'too-large';
        const next = change(bytes);
        if (next === undefined) return 'unchanged';
        await replaceContent(o.handle, next, signal);
        return 'replaced';
      }),

    async list(p) {
      const entries = await worded(p.shown, () => readDirExactly(p.at));
      if (entries === undefined) {
        throw changedWhileListed(p.shown);
      }
      return entries.map((e) => ({ name: e.name, kind: kindOf(e) }));
    },

    async *walk(p, options = {}) {
      const homes = homesOf.get(p) ?? (await bridleHomeForms(roots.bridleHome));
      const walked = walkFiles(p.at, { skipDirs: new Set(options.skipDirs ?? []), excludeRoots: homes, ...(options.signal ? { signal: options.signal } : {}) });
      for await (const w of walked) {
        const display = displayPath(roots.workspace, w.path);
        const entry: WalkEntry = { at: w.path, shown: display, display, kind: w.kind };
        homesOf.set(entry, homes);
        yield entry;
      }
    },
  };
}

export const localFsProvider = defineProvider({
  seam: FS,
  name: 'local',
  config: LocalFsConfig,
  inject: [SESSION],
  create: (c, services) => {
    const workspace = c.workspace ?? services.get(SESSION).cwd;
    return createLocalFs({
      workspace,
      bridleHome: c.bridleHome ?? services.get(SESSION).bridleHome,
      protect: c.protect ?? (c.gitWritable ? [] : [path.join(workspace, '.git')]),
      protectGit: !c.gitWritable,
    });
  },
});
