import { describe, expect, it } from 'vitest';
import { jsonLine, visible } from './visible.js';

/** Every code point a terminal acts on (or a bidi renderer reorders by). */
const ACTIVE = [
  ...Array.from({ length: 0x20 }, (_, i) => i),
  ...Array.from({ length: 0x21 }, (_, i) => 0x7f + i),
  0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069,
].map((c) => String.fromCharCode(c));
const hasActive = (s: string, allowed: string[] = []) => [...s].some((ch) => ACTIVE.includes(ch) && !allowed.includes(ch));

describe('visible', () => {
  it('a carriage return and an escape sequence cannot hide a command behind a harmless one', () => {
    const spoof = 'rm -rf ~ \r\x1b[2K\x1b[1A? bash: ls';
    const shown = visible(spoof);
    expect(shown).toBe('rm -rf ~ ␍␛[2K␛[1A? bash: ls');
    expect(hasActive(shown)).toBe(false);
  });

  it('shows every C0 control, DEL and every C1 control, one picture each', () => {
    expect(visible('\x00\x07\x08\x09\x0a\x0b\x0c\x0d\x1b\x1f')).toBe('␀␇␈␉␊␋␌␍␛␟');
    expect(visible('a\x7fb')).toBe('a␡b');
    expect(visible('\x9b31m\x85\x80\x9f')).toBe('⟨U+009B⟩31m⟨U+0085⟩⟨U+0080⟩⟨U+009F⟩');
    for (const ch of ACTIVE) expect(hasActive(visible(ch)), JSON.stringify(ch)).toBe(false);
  });

  it('shows the bidi overrides and isolates that reorder what a reader sees', () => {
    expect(visible('ls \u202etxt.exe\u202c')).toBe('ls ⟨U+202E⟩txt.exe⟨U+202C⟩');
    expect(visible('\u2066x\u2069')).toBe('⟨U+2066⟩x⟨U+2069⟩');
  });

  it('text mode keeps newlines and tabs but still shows a lone or paired carriage return', () => {
    expect(visible('line 1\n\tindented\r\nline 3\x1b[0m', 'text')).toBe('line 1\n\tindented␍\nline 3␛[0m');
    for (const ch of ACTIVE) expect(hasActive(visible(ch, 'text'), ['\n', '\t']), JSON.stringify(ch)).toBe(false);
  });

  it('leaves printable text alone, Unicode included, and is idempotent', () => {
    const plain = 'héllo wörld → ✓ 日本語 🙂 «quotes» \\x1b literal';
    expect(visible(plain)).toBe(plain);
    const once = visible('a\rb\x1bc\u0085d\u202ee');
    expect(visible(once)).toBe(once);
  });

  it('jsonLine escapes DEL, C1 and bidi controls as \\u escapes and parses back to the same value', () => {
    const value = { text: 'a\x1b[2Kb\x7fc\x9bd\u202ee\nf' };
    const line = jsonLine(value);
    expect(hasActive(line)).toBe(false);
    expect(line).toBe('{"text":"a\\u001b[2Kb\\u007fc\\u009bd\\u202ee\\nf"}');
    expect(JSON.parse(line)).toEqual(value);
    expect(jsonLine({ plain: 'ok' })).toBe(JSON.stringify({ plain: 'ok' }));
  });
});
