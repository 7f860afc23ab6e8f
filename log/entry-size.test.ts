/** What one entry may hold, measured as written (issue #20 item 4): escaped UTF-8 bytes; results cut with a note; the recorder's backstop. */
import { describe, expect, it } from 'vitest';
import { createMemoryStore } from '../adapters/store/memory.js';
import { capContent, draftToolResult } from './draft-tool-result.js';
import { escapedBytes, isOverBytes, MAX_ENTRY_BYTES, MAX_RESULT_BYTES, prefixWithin } from './entry-size.js';
import { LogAppendError } from './errors.js';
import { Recorder } from './recorder.js';

const ref = { turn: 't1', step: 't1.s1', callId: 't1.s1.c1', toolCallId: 'c', name: 'bash' };

describe('escaped sizes', () => {
  it('count what JSON.stringify writes, in UTF-8 bytes: escapes, multi-byte characters, pairs and lone surrogates', () => {
    for (const s of ['plain', 'quote " and \\ slash', '\n\t\u0001\u001f', 'é中🙂', '\ud83d lone', 'lone \ude00', '']) {
      expect(escapedBytes(s), JSON.stringify(s)).toBe(Buffer.byteLength(JSON.stringify(s)) - 2);
    }
  });

  it('a prefix within a size never splits a surrogate pair', () => {
    expect(prefixWithin('ab🙂', 5)).toBe('ab');
    expect(prefixWithin('ab🙂', 6)).toBe('ab🙂');
    expect(prefixWithin('\u0001x', 6)).toBe('\u0001');
  });

  it('isOverBytes is UTF-8 bytes of a line', () => {
    expect(isOverBytes('é'.repeat(10), 19)).toBe(true);
    expect(isOverBytes('é'.repeat(10), 20)).toBe(false);
  });
});

describe('a tool result too large for one entry', () => {
  it('is cut within the limit, saying what was cut, and cutting it again changes nothing (replay)', () => {
    const huge = '\u0002'.repeat(MAX_RESULT_BYTES); // six bytes each on the line
    const d = draftToolResult(ref, 'ok', huge);
    expect(escapedBytes(d.content)).toBeLessThanOrEqual(MAX_RESULT_BYTES);
    expect(d.content).toMatch(/\[result cut: 25165824 bytes as logged, over the log's limit of 4194304 for one result; the first \d+ are kept\]$/);
    expect(capContent(d.content)).toBe(d.content);
    expect(draftToolResult(ref, 'ok', 'small').content).toBe('small');
  });
});

describe("the recorder's backstop", () => {
  it('refuses an entry whose line would pass MAX_ENTRY_BYTES, before the store sees it, and records nothing', () => {
    const store = createMemoryStore();
    const r = new Recorder(store, () => 0);
    r.append({ kind: 'session/start', id: 's', cwd: '/w', model: 'm', depth: 0, parent: null, format: 2 });
    const big = 'x'.repeat(MAX_ENTRY_BYTES);
    let err: unknown;
    try {
      r.append({ kind: 'session/input', mode: 'followup', text: big, origin: 'user' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(LogAppendError);
    expect(err).toMatchObject({ code: 'LOG_ENTRY_TOO_LARGE', entryKind: 'session/input' });
    expect((err as LogAppendError).draft).toBeUndefined();
    expect(r.entries).toHaveLength(1);
    expect(store.lines).toHaveLength(1);
  });
});
