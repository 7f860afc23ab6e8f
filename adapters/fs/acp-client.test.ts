/**
 * The `acp-client` file system's own logic, against a client that records
 * what it is asked (the SDK-driven tests in `cli/acp.test.ts` and
 * `test/e2e/acp*.test.ts` run the same provider behind a real ACP client):
 * what goes to the client and what stays on the disk, and that every local
 * refusal comes first.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ACP_RESOURCE_NOT_FOUND, AcpClientError, type AcpClient, type AcpClientCapabilities } from '../../ports/acp-client.js';
import { readAtMost, type FileSystem } from '../../ports/fs.js';
import { ACP_CLIENT, SESSION } from '../../ports/index.js';
import { keyId, type KeyLike, type ServiceLookup } from '../../ports/service.js';
import { acpClientFsProvider, createAcpClientFs } from './acp-client.js';
import { createLocalFs } from './local.js';
import { createTempWorkspace, type TempWorkspace } from './testing.js';

let t: TempWorkspace;
beforeEach(() => (t = createTempWorkspace()));
afterEach(() => t.cleanup());

function editor(caps: Partial<AcpClientCapabilities> = {}) {
  const buffers = new Map<string, string>();
  const asked: string[] = [];
  let fail: AcpClientError | undefined;
  const client: AcpClient = {
    name: 'editor',
    capabilities: { readTextFile: true, writeTextFile: true, terminal: false, ...caps },
    readTextFile: async (path) => {
      asked.push(`read ${path}`);
      if (fail) throw fail;
      const text = buffers.get(path);
      if (text === undefined) throw new AcpClientError('Resource not found', ACP_RESOURCE_NOT_FOUND);
      return text;
    },
    writeTextFile: async (path, content) => {
      asked.push(`write ${path}`);
      if (fail) throw fail;
      buffers.set(path, content);
    },
    createTerminal: async () => {
      throw new AcpClientError('no terminal');
    },
  };
  return { client, buffers, asked, failWith: (e: AcpClientError) => (fail = e) };
}

const fsOver = (client: AcpClient, maxClientBytes = 1024): FileSystem =>
  createAcpClientFs({ local: createLocalFs({ workspace: t.workspace, bridleHome: t.bridleHome, protect: [t.at('.git')] }), client, maxClientBytes });

const readAll = async (fs: FileSystem, p: string) => {
  const h = await fs.open(await fs.realpath(p, { mustExist: true }));
  try {
    return Buffer.from((await readAtMost(h, 1 << 20))!).toString('utf8');
  } finally {
    await h.close();
  }
};

describe('the acp-client file system', () => {
  it('reads text through the client (its unsaved buffer), but a file past maxClientBytes or one that is not text from the disk', async () => {
    t.write({ 'a.txt': 'on disk', 'big.txt': 'x'.repeat(2000), 'bin.dat': new Uint8Array([0x89, 0x00, 0x01]) });
    const e = editor();
    e.buffers.set(t.at('a.txt'), 'in the editor');
    const fs = fsOver(e.client);
    expect(await readAll(fs, 'a.txt')).toBe('in the editor');
    expect(await readAll(fs, 'big.txt')).toBe('x'.repeat(2000));
    expect((await readAll(fs, 'bin.dat')).length).toBe(3);
    expect(e.asked).toEqual([`read ${t.at('a.txt')}`]);
  });

  it('writes through the client after the local checks; a new file (and its parents) is created first, so confinement holds; bytes that are not UTF-8 are written here', async () => {
    const e = editor();
    const fs = fsOver(e.client);
    expect(await fs.write(await fs.realpath('sub/dir/new.txt', { forWrite: true }), Buffer.from('hello'))).toEqual({ created: true });
    expect(e.buffers.get(t.at('sub/dir/new.txt'))).toBe('hello');
    expect(t.exists('sub/dir/new.txt')).toBe(true);
    t.write({ 'old.txt': 'old' });
    expect(await fs.write(await fs.realpath('old.txt', { forWrite: true }), Buffer.from('new'))).toEqual({ created: false });
    expect(e.buffers.get(t.at('old.txt'))).toBe('new');
    await fs.write(await fs.realpath('latin1.txt', { forWrite: true }), new Uint8Array([0xe9]));
    expect(t.readBytes('latin1.txt')).toEqual(Buffer.from([0xe9]));
    expect(e.asked).not.toContain(`write ${t.at('latin1.txt')}`);
  });

  it('refuses before asking the client: outside the workspace, bridle\'s home, a protected path, a hard-linked file, a directory', async () => {
    t.write({ 'linked.txt': 'x', [`${t.outside}/o.txt`]: 'o' });
    t.hardLink(t.at('linked.txt'), t.at('twin.txt'));
    t.mkdir('adir');
    const e = editor();
    const fs = fsOver(e.client);
    const code = (p: Promise<unknown>) => p.then(() => 'ok', (err: { code?: string }) => err.code);
    expect(await code(fs.realpath('../outside/o.txt'))).toBe('OUTSIDE_WORKSPACE');
    expect(await code(fs.realpath(t.bridleHome))).toBe('INSIDE_BRIDLE_HOME');
    expect(await code(fs.realpath('.git/config', { forWrite: true }))).toBe('PROTECTED_PATH');
    expect(await code(fs.realpath('adir', { forWrite: true }))).toBe('IS_A_DIRECTORY');
    expect(await code(fs.realpath('linked.txt', { forWrite: true }).then((p) => fs.write(p, Buffer.from('y'))))).toBe('HARD_LINKED');
    expect(await code(fs.realpath('linked.txt', { forWrite: true }).then((p) => fs.update(p, { maxBytes: 100 }, () => Buffer.from('y'))))).toBe('HARD_LINKED');
    expect(e.asked).toEqual([]);
  });

  it('update reads and writes through the client; too-large counts the client\'s text; unchanged writes nothing', async () => {
    t.write({ 'e.txt': 'disk text' });
    const e = editor();
    e.buffers.set(t.at('e.txt'), 'buffer text');
    const fs = fsOver(e.client);
    const p = await fs.realpath('e.txt', { mustExist: true, forWrite: true });
    expect(await fs.update(p, { maxBytes: 100 }, (b) => Buffer.from(Buffer.from(b).toString().replace('buffer', 'edited')))).toBe('replaced');
    expect(e.buffers.get(t.at('e.txt'))).toBe('edited text');
    expect(await fs.update(p, { maxBytes: 3 }, () => Buffer.from('x'))).toBe('too-large');
    const before = e.asked.length;
    expect(await fs.update(p, { maxBytes: 100 }, () => undefined)).toBe('unchanged');
    expect(e.asked.slice(before)).toEqual([`read ${t.at('e.txt')}`]);
    expect(t.read('e.txt')).toBe('disk text');
  });

  it('the client\'s failures are the port\'s: a missing file NOT_FOUND, anything else CLIENT_FAILED naming the editor\'s words', async () => {
    t.write({ 'a.txt': 'x' });
    const e = editor();
    const fs = fsOver(e.client);
    await expect(readAll(fs, 'a.txt')).rejects.toMatchObject({ name: 'FsIoError', code: 'NOT_FOUND' });
    e.failWith(new AcpClientError('fs/read_text_file: the editor crashed', -32603));
    await expect(readAll(fs, 'a.txt')).rejects.toMatchObject({ code: 'CLIENT_FAILED', message: expect.stringContaining('the editor crashed') });
  });

  it('the provider mounts over the acp-client service, and refuses a client that offers no file access', () => {
    const lookup = (client: AcpClient): ServiceLookup => ({
      get: <T>(k: KeyLike) => (keyId(k) === keyId(ACP_CLIENT) ? client : keyId(k) === keyId(SESSION) ? { cwd: t.workspace, bridleHome: t.bridleHome } : undefined) as T,
      has: () => true,
      onDispose: () => undefined,
    });
    expect(acpClientFsProvider.create(acpClientFsProvider.config.parse({}), lookup(editor().client)).id).toBe('acp-client(editor)');
    expect(() => acpClientFsProvider.create(acpClientFsProvider.config.parse({}), lookup(editor({ readTextFile: false, writeTextFile: false }).client))).toThrow(/offers neither/);
  });
});
