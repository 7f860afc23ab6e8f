/**
 * Path confinement for the local file system: every path a model names is resolved
 * the way the kernel would resolve it (component by component, following
 * symlinks, `..` applied to the real parent) and only then checked, so a
 * symlink anywhere on the way cannot smuggle a read or write out of the
 * workspace or into `$BRIDLE_HOME`.
 *
 * The check and the later use are two system calls: the provider never opens
 * the path it got back by name alone but through `local-open.ts`, which checks
 * again what it actually opened (ADR 0011).
 */
import { lstat, readlink, realpath } from 'node:fs/promises';
import path from 'node:path';
import { ToolError } from '../../ports/tool-error.js';
import { gitComponent, isGitName, isInside } from '../../safety/paths.js';
import { emptyPath, isADirectory, notFound, nulByte, outsideWorkspace, protectedPath } from './refusals.js';
import { FsCode } from '../../ports/fs.js';


/** Where the local file system confines every path: from its config, that is from the session. */
export interface LocalRoots {
  /** The workspace root, absolute and real (symlinks resolved). */
  workspace: string;
  /** `$BRIDLE_HOME`, absolute; refused whether spelled or reached through a link. */
  bridleHome: string;
  /** Absolute paths that may be read but never written (the workspace's `.git` unless git writes are allowed). */
  protect: readonly string[];
  /** Refuse writes to, and the creation of, any `.git` below the workspace, at any depth (unless git writes are allowed). */
  protectGit: boolean;
}

export interface ResolveOptions {
  /** Fail with `NOT_FOUND` when the target does not exist. */
  mustExist?: boolean;
  /** The caller will write the target: fail with `IS_A_DIRECTORY` when it is one. */
  forWrite?: boolean;
}

/** The same bound Linux uses before giving up with ELOOP. */
const MAX_SYMLINKS = 40;

interface Walked {
  path: string;
  exists: boolean;
  /** A component named `.git` was stepped through on the way (spelled, or in a link's target): the real path may not say so. */
  viaGit: string | undefined;
}

/**
 * Follows `userPath` from `start` one component at a time. Once a component is
 * missing, the rest is appended lexically: nothing below it exists, so no
 * symlink can redirect it. A `.git` met below `workspace` is remembered: a
 * link named `.git` leads to a repository whose real path need not say so.
 */
async function walk(start: string, userPath: string, workspace: string): Promise<Walked | ToolError> {
  let current = start;
  const queue = userPath.split('/');
  let followed = 0;
  let viaGit: string | undefined;
  while (queue.length > 0) {
    const part = queue.shift()!;
    if (part === '' || part === '.') continue;
    if (isGitName(part) && isInside(workspace, current)) viaGit ??= path.join(current, part);
    if (part === '..') {
      current = path.dirname(current);
      continue;
    }
    const candidate = path.join(current, part);
    let stats;
    try {
      stats = await lstat(candidate);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENAMETOOLONG') return new ToolError(FsCode.INVALID_PATH, `Path "${userPath}" is too long.`);
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw err;
      return { path: path.resolve(candidate, ...queue), exists: false, viaGit };
    }
    if (!stats.isSymbolicLink()) {
      current = candidate;
      continue;
    }
    if (++followed > MAX_SYMLINKS) {
      return new ToolError(FsCode.INVALID_PATH, `Path "${userPath}" has too many levels of symbolic links.`);
    }
    let target: string;
    try {
      target = await readlink(candidate);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'EINVAL') throw err;
      // Swapped between the lstat and the readlink: look at this component again (still bounded by MAX_SYMLINKS).
      queue.unshift(part);
      continue;
    }
    if (path.isAbsolute(target)) current = path.parse(target).root;
    queue.unshift(...target.split('/'));
  }
  return { path: current, exists: true, viaGit };
}

/** `$BRIDLE_HOME` as both spelled and real, since either spelling may be the one a path walks through. */
export async function bridleHomeForms(bridleHome: string): Promise<string[]> {
  const spelled = path.resolve(bridleHome);
  try {
    const real = await realpath(spelled);
    return real === spelled ? [spelled] : [spelled, real];
  } catch {
    return [spelled];
  }
}

/**
 * Resolves a model-supplied path to an absolute real path inside the workspace.
 * Relative paths are taken from the workspace root.
 *
 * Contract: never throws for a bad path; returns a `ToolError` with code
 * `OUTSIDE_WORKSPACE`, `INSIDE_BRIDLE_HOME`, `PROTECTED_PATH` (a write inside
 * `roots.protect`, or with `protectGit` to or through any `.git` below the workspace), `NOT_FOUND`, `IS_A_DIRECTORY` or `INVALID_PATH` instead.
 * Unexpected I/O errors (EACCES on a parent) do throw.
 */
export async function resolveInWorkspace(
  ctx: LocalRoots & { homes?: readonly string[] },
  userPath: string,
  options: ResolveOptions = {},
): Promise<string | ToolError> {
  if (userPath.trim() === '') return emptyPath();
  if (userPath.includes('\0')) return nulByte(userPath);

  const start = path.isAbsolute(userPath) ? path.parse(userPath).root : ctx.workspace;
  const walked = await walk(start, userPath, ctx.workspace);
  if (walked instanceof ToolError) return walked;
  const resolved = walked.path;
  const via = resolved === path.resolve(ctx.workspace, userPath) ? '' : ` (it resolves to ${resolved})`;

  for (const home of ctx.homes ?? (await bridleHomeForms(ctx.bridleHome))) {
    if (isInside(home, resolved)) {
      return new ToolError(
        FsCode.INSIDE_BRIDLE_HOME,
        `Path "${userPath}"${via} is inside bridle's own home ${home}, which tools may not touch.`,
      );
    }
  }
  for (const p of options.forWrite ? ctx.protect : []) {
    for (const form of await bridleHomeForms(p)) {
      if (isInside(form, resolved)) return protectedPath(userPath, via, form, p);
    }
  }
  if (!isInside(ctx.workspace, resolved)) return outsideWorkspace(userPath, via, ctx.workspace);
  if (options.forWrite && ctx.protectGit) {
    const git = gitComponent(ctx.workspace, resolved) ?? walked.viaGit;
    if (git !== undefined) return protectedPath(userPath, via, git, git);
  }
  if (!walked.exists) {
    if (options.mustExist) return notFound(userPath);
    return resolved;
  }
  if (options.forWrite && (await lstat(resolved)).isDirectory()) {
    return isADirectory(userPath);
  }
  return resolved;
}
