/**
 * The `memory` file system: files and directories held in this process, the
 * stand-in for a remote sandbox's. It refuses what the local one refuses
 * where that means something without a disk, in the same words: an empty
 * path or one with a NUL, a path outside the root (by `..` or spelled
 * absolute), a missing file, a directory where a file is wanted, a file
 * where a directory is, a write under a protected path. It has no symbolic
 * links, hard links, special files or `$BRIDLE_HOME`, so none of those can
 * be met. Seeded from its config.
 */
import path from 'node:path';
import { z } from 'zod';
import { byCodePoint, type DirEntry, type FileSystem, type FsPath, type PathIntent, type WalkEntry, type WalkOptions } from '../../ports/fs.js';
import { FS, SESSION } from '../../ports/index.js';
import { defineProvider } from '../../ports/provider.js';
import { displayPath, isInside } from '../../safety/paths.js';
import { emptyPath, ioError, isADirectory, notFound, nulByte, outsideWorkspace, protectedPath } from './refusals.js';

const posix = path.posix;

export const MemoryFsConfig = z.strictObject({
  root: z.string().refine((p) => posix.isAbsolute(p), 'must be an absolute path').optional().describe("Where the workspace root is, as paths spell it. Default: the session's workspace."),
  files: z.record(z.string(), z.string()).default({}).describe('Files to start with: path (relative to the root) → UTF-8 content. Parents are created.'),
  protect: z.array(z.string()).default([]).describe('Paths (relative to the root, or absolute inside it) that may be read but not written.'),
});
export type MemoryFsOptions = z.input<typeof MemoryFsConfig>;

interface File {
  kind: 'file';
  bytes: Uint8Array;
}
interface Dir {
  kind: 'directory';
  children: Map<string, Node>;
}
type Node = File | Dir;

/** What the file system's parts share: where its root is, the tree under it, and the paths it will not write. */
interface Tree {
  root: string;
  top: Dir;
  protect: string[];
}

export function createMemoryFs(options: MemoryFsOptions = {}): FileSystem {
  const config = MemoryFsConfig.parse(options);
  const root = posix.normalize(config.root ?? '/workspace').replace(/(.)\/$/, '$1');
  const t: Tree = { root, top: { kind: 'directory', children: new Map() }, protect: config.protect.map((p) => posix.resolve(root, p)) };
  for (const [rel, text] of Object.entries(config.files)) store(t, posix.resolve(root, rel), rel, new TextEncoder().encode(text));

  return {
    id: 'memory',
    root: place(t, root, '.'),
    realpath: async (userPath, intent = {}) => confine(t, userPath, intent),

    async stat(p) {
      const node = existing(t, p);
      return { kind: node.kind, size: node.kind === 'file' ? node.bytes.length : 0 };
    },

    async open(p) {
      const { bytes } = existingFile(t, p);
      return {
        size: bytes.length,
        read: async (position, length) => bytes.slice(position, position + length),
        close: async () => {},
      };
    },

    async write(p, bytes, signal) {
      signal?.throwIfAborted();
      return { created: store(t, p.at, p.shown, bytes) };
    },

    async update(p, { maxBytes, signal }, change) {
      const file = existingFile(t, p);
      if (file.bytes.length > maxBytes) return 'too-large';
      signal?.throwIfAborted();
      const next = change(file.bytes.slice());
      if (next === undefined) return 'unchanged';
      file.bytes = next.slice();
      return 'replaced';
    },

    async list(p) {
      const node = existing(t, p);
      if (node.kind !== 'directory') throw blocked(p.shown);
      return [...node.children].map(([name, child]): DirEntry => ({ name, kind: child.kind }));
    },

    walk: (p, options = {}) => walkTree(t, p, options),
  };
}

const parts = (t: Tree, at: string): string[] => posix.relative(t.root, at).split('/').filter((p) => p !== '');
const place = (t: Tree, at: string, shown: string): FsPath => ({ at, shown, display: displayPath(t.root, at) });
// A missing file and a file standing where a parent should be are what ENOENT and ENOTDIR are on a disk.
const gone = (shown: string) => ioError('ENOENT', shown)!;
const blocked = (shown: string) => ioError('ENOTDIR', shown)!;
const isDir = isADirectory;

/** `realpath`: refusals first, in the local file system's order and words. */
function confine(t: Tree, userPath: string, intent: PathIntent): FsPath {
  if (userPath.trim() === '') throw emptyPath();
  if (userPath.includes('\0')) throw nulByte(userPath);
  const at = posix.resolve(t.root, userPath);
  // No links: a path is where it is spelled, so there is never a `via` to tell.
  for (const p of intent.forWrite ? t.protect : []) if (isInside(p, at)) throw protectedPath(userPath, '', p, p);
  if (!isInside(t.root, at)) throw outsideWorkspace(userPath, '', t.root);
  const node = find(t, at);
  if (typeof node === 'string') {
    if (intent.mustExist) throw notFound(userPath);
  } else if (intent.forWrite && node.kind === 'directory') {
    throw isDir(userPath);
  }
  return place(t, at, userPath);
}

/** The node at `at`; `missing` when nothing is there; `blocked` when a file stands where a parent should be. */
function find(t: Tree, at: string): Node | 'missing' | 'blocked' {
  let node: Node = t.top;
  for (const part of parts(t, at)) {
    if (node.kind !== 'directory') return 'blocked';
    const next = node.children.get(part);
    if (next === undefined) return 'missing';
    node = next;
  }
  return node;
}

function existing(t: Tree, p: FsPath): Node {
  const node = find(t, p.at);
  if (node === 'missing') throw gone(p.shown);
  if (node === 'blocked') throw blocked(p.shown);
  return node;
}

function existingFile(t: Tree, p: FsPath): File {
  const node = existing(t, p);
  if (node.kind === 'directory') throw isDir(p.shown);
  return node;
}

/** The directory that holds `at`, created with its missing ancestors. */
function parentOf(t: Tree, at: string, shown: string): Dir {
  let dir = t.top;
  for (const part of parts(t, at).slice(0, -1)) {
    let next = dir.children.get(part);
    if (next === undefined) dir.children.set(part, (next = { kind: 'directory', children: new Map() }));
    if (next.kind !== 'directory') throw blocked(shown);
    dir = next;
  }
  return dir;
}

/** Writes a file at `at`, its parents created; whether it is new. */
function store(t: Tree, at: string, shown: string, bytes: Uint8Array): boolean {
  const name = parts(t, at).at(-1);
  if (name === undefined) throw isDir(shown);
  const dir = parentOf(t, at, shown);
  const before = dir.children.get(name);
  if (before?.kind === 'directory') throw isDir(shown);
  dir.children.set(name, { kind: 'file', bytes: bytes.slice() });
  return before === undefined;
}

/** Files under `p`, depth first, names in code-point order. */
async function* walkTree(t: Tree, p: FsPath, options: WalkOptions): AsyncGenerator<WalkEntry> {
  const skip = new Set(options.skipDirs ?? []);
  const start = existing(t, p);
  if (start.kind !== 'directory') return;
  const pending: [string, Dir][] = [[p.at, start]];
  while (pending.length > 0) {
    if (options.signal?.aborted) return;
    const [at, dir] = pending.pop()!;
    const subdirs: [string, Dir][] = [];
    for (const name of [...dir.children.keys()].sort(byCodePoint)) {
      const child = dir.children.get(name)!;
      const full = posix.join(at, name);
      if (child.kind === 'directory') {
        if (!skip.has(name)) subdirs.push([full, child]);
      } else {
        const entry: WalkEntry = { ...place(t, full, displayPath(t.root, full)), kind: 'file' };
        yield entry;
      }
    }
    pending.push(...subdirs.reverse());
  }
}

export const memoryFsProvider = defineProvider({
  seam: FS,
  name: 'memory',
  config: MemoryFsConfig,
  inject: [SESSION],
  create: (config, services) => createMemoryFs({ ...config, root: config.root ?? services.get(SESSION).cwd }),
});
