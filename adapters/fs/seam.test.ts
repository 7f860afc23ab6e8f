/**
 * The fs seam as the course's exercise states it: the same consumer (the
 * file tools, unchanged) over whichever provider a row names. Only the row
 * differs between the two worlds below.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FileSystem } from '../../ports/fs.js';
import { FS } from '../../ports/index.js';
import type { ProviderDefinition } from '../../ports/provider.js';
import type { ServiceLookup } from '../../ports/service.js';
import type { ToolContext, ToolOutput } from '../../ports/tools.js';
import { createMemorySubprocess } from '../subprocess/memory.js';
import { builtinTools } from '../../tools/index.js';
import { localFsProvider } from './local.js';
import { memoryFsProvider } from './memory.js';
import { tempDir } from '../../test/helpers/temp.js';

/** The fs providers a row's `use` may name. */
const catalogue: Record<string, ProviderDefinition<FileSystem, any>> = { local: localFsProvider, memory: memoryFsProvider };
const nothing: ServiceLookup = { get: (k) => { throw new Error(`no service ${String(k)}`); }, has: () => false, onDispose: () => {} };

/** What a host does with a row: look the provider up by name, parse the row's config, create. */
function mount(row: { use: string; config: unknown }): FileSystem {
  const provider = catalogue[row.use]!;
  expect(provider.seam).toBe(FS);
  return provider.create(provider.config.parse(row.config), nothing);
}

/** The consumer: the built-in file tools, called as the model would, in one fixed order. */
async function session(fileSystem: FileSystem): Promise<ToolOutput[]> {
  const tools = new Map(builtinTools().map((t) => [t.name, t]));
  const ctx: ToolContext = { fs: fileSystem, subprocess: createMemorySubprocess(), signal: new AbortController().signal };
  const call = (name: string, args: unknown) => tools.get(name)!.execute(tools.get(name)!.parameters.parse(args), ctx);
  return [
    await call('write_file', { path: 'notes/plan.txt', content: 'alpha\nbeta\ngamma\n' }),
    await call('read_file', { path: 'notes/plan.txt' }),
    await call('edit_file', { path: 'notes/plan.txt', old_text: 'beta', new_text: 'BETA' }),
    await call('read_file', { path: 'notes/plan.txt', offset: 2, limit: 1 }),
    await call('write_file', { path: 'src/main.ts', content: 'export const beta = "BETA";\n' }),
    await call('list_dir', {}),
    await call('list_dir', { path: 'notes' }),
    await call('glob', { pattern: '**/*.{ts,txt}' }),
    await call('grep', { pattern: 'BETA' }),
    await call('read_file', { path: '../outside.txt' }),
    await call('read_file', { path: 'notes' }),
  ];
}

let root: string;
let workspace: string;
let bridleHome: string;
beforeEach(() => {
  root = fs.realpathSync(tempDir('bridle-seam-'));
  workspace = path.join(root, 'ws');
  bridleHome = path.join(root, 'home');
  fs.mkdirSync(workspace);
  fs.mkdirSync(bridleHome);
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

const onDisk = (dir: string): string[] => fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort();

describe('the fs seam', () => {
  it('swapping providers in config alone changes where files live, with zero consumer changes', async () => {
    // The memory world is rooted at the very same path, so nothing but the row tells the two apart.
    const local = await session(mount({ use: 'local', config: { workspace, bridleHome } }));
    const onLocalDisk = onDisk(workspace);
    fs.rmSync(workspace, { recursive: true });
    fs.mkdirSync(workspace);
    const memory = await session(mount({ use: 'memory', config: { root: workspace } }));

    // Where the files live: the local run left them on the disk, the memory run left the disk untouched.
    expect(onLocalDisk).toEqual(['notes', 'notes/plan.txt', 'src', 'src/main.ts']);
    expect(onDisk(workspace)).toEqual([]);
    expect(onDisk(root)).toEqual(['home', 'ws']);

    // What the consumer saw: the same, call for call; and in each world the reads saw the writes.
    expect(memory).toEqual(local);
    expect(memory.map((o) => o.code ?? o.status)).toEqual(['ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'OUTSIDE_WORKSPACE', 'IS_A_DIRECTORY']);
    expect(memory[1]!.content).toBe('   1\talpha\n   2\tbeta\n   3\tgamma');
    expect(memory[3]!.content).toBe('   2\tBETA\n[showing lines 2-2 of 3; use offset=3 to read on]');
    expect(memory[5]!.content).toBe('notes/\nsrc/');
    expect(memory[7]!.content).toBe('notes/plan.txt\nsrc/main.ts');
    expect(memory[8]!.content).toBe('notes/plan.txt:2: BETA\nsrc/main.ts:1: export const beta = "BETA";');
  });

  it('a memory row seeds its files from config, and the tools read them', async () => {
    const seeded = mount({ use: 'memory', config: { root: '/workspace', files: { 'README.md': '# hello\n', 'src/a.ts': 'const a = 1;\n' } } });
    const outs = await session(seeded);
    expect(outs[5]!.content).toBe('README.md\nnotes/\nsrc/');
    expect(outs[7]!.content).toBe('notes/plan.txt\nsrc/a.ts\nsrc/main.ts');
  });

  it('a row whose config the provider cannot honour is refused at mount, naming the field', () => {
    expect(() => mount({ use: 'local', config: { workspace: 'relative/ws', bridleHome } })).toThrow(/workspace[\s\S]*absolute/);
    expect(() => mount({ use: 'memory', config: { root: '/w', extra: 1 } })).toThrow(/extra/);
  });
});
