/**
 * Model-controlled text on a terminal: every character a terminal would act
 * on instead of print is made visible, so what is shown is what was sent. A
 * `\r` cannot send the cursor back over a command, an escape sequence cannot
 * clear a line or recolour it, a bidi override cannot reorder it.
 *
 * C0 controls (ESC among them) and DEL become their Unicode control pictures
 * (`\r` → `␍`, ESC → `␛`, DEL → `␡`): one cell each, so columns still line up.
 * C1 controls and the bidi embedding, override and isolate controls have no
 * picture and become `⟨U+009B⟩`. Nothing else changes.
 */

/** Everything a terminal (or a bidi-aware renderer) acts on: C0, DEL, C1, bidi embeddings, overrides and isolates. */
const ACTIVE = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;
/** The same, without `\n` and `\t`: prose keeps its lines and its indentation. */
const ACTIVE_IN_TEXT = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

const hex = (c: number) => c.toString(16).toUpperCase().padStart(4, '0');

function picture(ch: string): string {
  const c = ch.charCodeAt(0);
  if (c < 0x20) return String.fromCharCode(0x2400 + c);
  if (c === 0x7f) return '\u2421';
  return `⟨U+${hex(c)}⟩`;
}

/**
 * `line` (the default): for one-line fields (a tool name, an argument, a
 * result summary, a timeline line), where even a newline or a tab is shown.
 * `text`: for prose that streams (the model's text and reasoning), which
 * keeps `\n` and `\t`; a `\r` is still shown, so `\r\n` shows as `␍` + newline.
 *
 * Contract: pure; the result holds no character a terminal acts on (in `text`
 * mode, none but `\n` and `\t`); idempotent.
 */
export function visible(text: string, mode: 'line' | 'text' = 'line'): string {
  return text.replace(mode === 'text' ? ACTIVE_IN_TEXT : ACTIVE, picture);
}

/**
 * A value as one JSON line that a terminal shows as it is: `JSON.stringify`
 * escapes C0 already; DEL, C1 and the bidi controls get `\uXXXX` too. The
 * line parses back to the same value.
 */
export function jsonLine(value: unknown): string {
  return JSON.stringify(value).replace(ACTIVE, (ch) => `\\u${hex(ch.charCodeAt(0)).toLowerCase()}`);
}
