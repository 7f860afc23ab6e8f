import { describe, expect, it } from 'vitest';
import { capText, resultText } from './content.js';

describe('an MCP result as text', () => {
  it('keeps text, describes every other part in one line, and never pastes base64', () => {
    const png = Buffer.alloc(300, 1).toString('base64');
    const text = resultText({
      content: [
        { type: 'text', text: 'first' },
        { type: 'image', data: png, mimeType: 'image/png' },
        { type: 'audio', data: 'AAAA', mimeType: 'audio/wav' },
        { type: 'resource', resource: { uri: 'file:///a.txt', mimeType: 'text/plain', text: 'inside a' } },
        { type: 'resource', resource: { uri: 'file:///b.bin', blob: Buffer.alloc(2048).toString('base64') } },
        { type: 'resource_link', uri: 'file:///c', name: 'c', description: 'the c file' },
        { type: 'hologram', data: 'zzz' },
      ],
    });
    expect(text.split('\n')).toEqual([
      'first',
      '[image: image/png, 300 bytes; not shown: this session passes text only]',
      '[audio: audio/wav, 3 bytes; not shown: this session passes text only]',
      '[resource file:///a.txt (text/plain)]',
      'inside a',
      '[resource file:///b.bin: 2.0 KiB of binary data; not shown]',
      '[resource link: c <file:///c> — the c file]',
      '[hologram content; not shown: bridle does not know this kind of part]',
    ]);
    expect(text).not.toContain(png.slice(0, 40));
  });

  it('shows structured content as compact JSON only when no text part carries it, and says so when there is nothing', () => {
    expect(resultText({ content: [], structuredContent: { t: 1, u: [2] } })).toBe('{"t":1,"u":[2]}');
    expect(resultText({ content: [{ type: 'text', text: '{"t":1}' }], structuredContent: { t: 1 } })).toBe('{"t":1}');
    expect(resultText({ content: [] })).toBe('(the tool returned no content)');
    // Hostile shapes are described, not thrown on.
    expect(resultText({ content: [null as never, { type: 'text', text: 5 as never }] })).toBe('[a content part that is not an object; not shown]\n');
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(resultText({ structuredContent: cyclic })).toBe('[structured content that cannot be shown as JSON]');
  });

  it('structured content that mirrors an image part is not shown again, and base64 anywhere inside structured content is a note of its size (issue 23)', () => {
    const png = Buffer.alloc(300 * 1024, 7).toString('base64');
    const image = { type: 'image', data: png, mimeType: 'image/png' };
    expect(resultText({ content: [image], structuredContent: { content: [image] } })).toBe('[image: image/png, 300.0 KiB; not shown: this session passes text only]');
    const other = resultText({ content: [], structuredContent: { file: 'a.png', bytes: png } });
    expect(other).toBe('{"file":"a.png","bytes":"[base64 data, 300.0 KiB; not shown]"}');
    // Words are not base64, however long; short base64-looking strings (ids, hashes) are kept.
    expect(resultText({ content: [], structuredContent: { id: 'abc123DEF', prose: 'a b '.repeat(100) } })).toContain('"id":"abc123DEF"');
  });

  it('caps a long result on a code point, saying how much was cut', () => {
    const out = capText(`${'a'.repeat(9)}😀tail`, 10);
    expect(out.startsWith('a'.repeat(9))).toBe(true);
    expect(out).not.toContain('\ud83d');
    expect(out).toContain('[… 6 more characters cut: the result was longer than 10]');
    expect(resultText({ content: [{ type: 'text', text: 'x'.repeat(100_000) }] }).length).toBeLessThan(64 * 1024 + 100);
  });
});
