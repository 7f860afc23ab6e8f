import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { editFileTool, type EditFileArgs } from './edit-file.js';
import { createTempWorkspace, type TempWorkspace } from '../adapters/fs/testing.js';

let t: TempWorkspace;
beforeEach(() => {
  t = createTempWorkspace();
});
afterEach(() => t.cleanup());

const edit = (args: EditFileArgs) => editFileTool.execute(editFileTool.parameters.parse(args), t.ctx);
const readWs = (rel: string) => t.read(path.join(t.workspace, rel));
const numbered = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join('\n') + '\n';

describe('edit_file', () => {
  it('refuses to edit a file in the workspace\'s .git while it is protected', async () => {
    t.write({ '.git/config': '[core]\n\tbare = false\n' });
    const out = await editFileTool.execute({ path: '.git/config', old_text: 'bare = false', new_text: 'fsmonitor = ./evil.sh' }, t.ctxWith({ protect: [path.join(t.workspace, '.git')] }));
    expect(out).toMatchObject({ status: 'error', code: 'PROTECTED_PATH' });
    expect(readWs('.git/config')).toBe('[core]\n\tbare = false\n');
  });

  it('replaces the unique occurrence and shows context around it', async () => {
    t.write({ 'a.txt': numbered(10) });
    const out = await edit({ path: 'a.txt', old_text: 'line 5\n', new_text: 'five\nfive and a half\n' });
    expect(out.status).toBe('ok');
    expect(out.content).toBe(
      [
        'Edited a.txt at line 5:',
        '   2\tline 2',
        '   3\tline 3',
        '   4\tline 4',
        '   5\tfive',
        '   6\tfive and a half',
        '   7\tline 6',
        '   8\tline 7',
        '   9\tline 8',
      ].join('\n'),
    );
    expect(readWs('a.txt')).toBe(numbered(10).replace('line 5\n', 'five\nfive and a half\n'));
  });

  it('inserts replacement text literally, $ patterns included', async () => {
    t.write({ 'a.js': 'const x = 1;\n' });
    await edit({ path: 'a.js', old_text: '1', new_text: "'$&$1$$'" });
    expect(readWs('a.js')).toBe("const x = '$&$1$$';\n");
  });

  it('can delete text', async () => {
    t.write({ 'a.txt': 'keep\ndrop\nkeep too\n' });
    const out = await edit({ path: 'a.txt', old_text: 'drop\n', new_text: '' });
    expect(out.status).toBe('ok');
    expect(readWs('a.txt')).toBe('keep\nkeep too\n');
  });

  it('tells missing from repeated text', async () => {
    t.write({ 'a.txt': 'foo bar foo baz foo\n' });
    const missing = await edit({ path: 'a.txt', old_text: 'qux', new_text: 'x' });
    expect(missing).toMatchObject({ status: 'error', code: 'EDIT_NOT_FOUND' });
    expect(missing.content).toContain('not found in "a.txt"');
    const repeated = await edit({ path: 'a.txt', old_text: 'foo', new_text: 'x' });
    expect(repeated).toMatchObject({ status: 'error', code: 'EDIT_AMBIGUOUS' });
    expect(repeated.content).toContain('occurs 3 times');
    expect(readWs('a.txt')).toBe('foo bar foo baz foo\n');
  });

  it('counts overlapping occurrences as ambiguous', async () => {
    t.write({ 'a.txt': 'aaa' });
    expect(await edit({ path: 'a.txt', old_text: 'aa', new_text: 'b' })).toMatchObject({ code: 'EDIT_AMBIGUOUS' });
  });

  it('hints at CRLF line endings', async () => {
    t.write({ 'a.txt': 'one\r\ntwo\r\n' });
    const out = await edit({ path: 'a.txt', old_text: 'one\ntwo', new_text: 'x' });
    expect(out.code).toBe('EDIT_NOT_FOUND');
    expect(out.content).toContain('CRLF');
  });

  it('refuses a file that is not valid UTF-8 with NOT_UTF8, bytes untouched (Latin-1 café once became U+FFFD and was reported ok)', async () => {
    const latin1 = Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a, 0x78, 0x0a]); // "café\nx\n" in Latin-1
    t.write({ 'latin1.txt': latin1 });
    const out = await edit({ path: 'latin1.txt', old_text: 'x', new_text: 'y' });
    expect(out).toMatchObject({ status: 'error', code: 'NOT_UTF8' });
    expect(out.content).toContain('latin1.txt');
    expect(t.readBytes(path.join(t.workspace, 'latin1.txt'))).toEqual(latin1);
  });

  it('changes no byte it was not asked to: a BOM, CRLF line endings and a missing final newline survive', async () => {
    const bytes = (s: string) => Buffer.from(s, 'utf8');
    const cases: [name: string, before: Buffer, oldText: string, newText: string, after: Buffer][] = [
      ['bom.txt', bytes('\ufeffone\ntwo\n'), 'two', '2', bytes('\ufeffone\n2\n')],
      ['crlf.txt', bytes('one\r\ntwo\r\nthree\r\n'), 'two', 'zwei', bytes('one\r\nzwei\r\nthree\r\n')],
      ['no-eol.txt', bytes('one\ntwo'), 'one', '1', bytes('1\ntwo')],
      ['mixed.txt', bytes('é\r\n✓\n\u{1F600}'), '✓', 'ok', bytes('é\r\nok\n\u{1F600}')],
    ];
    for (const [name, before, oldText, newText, after] of cases) {
      t.write({ [name]: before });
      expect(await edit({ path: name, old_text: oldText, new_text: newText }), name).toMatchObject({ status: 'ok' });
      expect(t.readBytes(path.join(t.workspace, name)), name).toEqual(after);
    }
  });

  it('refuses a file over 16 MiB with FILE_TOO_LARGE instead of holding it in memory twice', async () => {
    t.write({ 'big.txt': 'needle\n' + 'x'.repeat(16 * 1024 * 1024) });
    expect(await edit({ path: 'big.txt', old_text: 'needle', new_text: 'pin' })).toMatchObject({ status: 'error', code: 'FILE_TOO_LARGE' });
    expect(t.read(path.join(t.workspace, 'big.txt')).startsWith('needle\n')).toBe(true);
  });

  it('fails with stable codes for bad targets', async () => {
    t.write({ 'dir/x': '', 'bin': Buffer.from([1, 0, 2]) });
    t.write({ [path.join(t.outside, 'secret.txt')]: 'secret' });
    t.symlink(path.join(t.outside, 'secret.txt'), path.join(t.workspace, 'link'));
    const cases: [string, string][] = [
      ['missing.txt', 'NOT_FOUND'],
      ['dir', 'IS_A_DIRECTORY'],
      ['bin', 'BINARY_FILE'],
      ['link', 'OUTSIDE_WORKSPACE'],
      ['../outside/secret.txt', 'OUTSIDE_WORKSPACE'],
    ];
    for (const [p, code] of cases) expect(await edit({ path: p, old_text: 'secret', new_text: 'x' }), p).toMatchObject({ code });
    expect(t.read(path.join(t.outside, 'secret.txt'))).toBe('secret');
  });

  it('refuses to edit through a hard link (HARD_LINKED): the other name may lie outside', async () => {
    const secret = path.join(t.outside, 'secret.txt');
    t.write({ [secret]: 'outside\n' });
    t.hardLink(secret, path.join(t.workspace, 'linked.txt'));
    expect(await edit({ path: 'linked.txt', old_text: 'outside', new_text: 'pwned' })).toMatchObject({ status: 'error', code: 'HARD_LINKED' });
    expect(t.read(secret)).toBe('outside\n');
  });

  it('rejects an empty old_text, is not idempotent, presents in one line', () => {
    expect(editFileTool.parameters.safeParse({ path: 'a', old_text: '', new_text: 'x' }).success).toBe(false);
    expect(editFileTool.idempotent || editFileTool.readOnly).toBe(false);
    expect(editFileTool.present({ path: 'a.ts', old_text: 'a\nb', new_text: 'c' })).toBe('edit_file a.ts (-2 +1 lines)');
  });
});
