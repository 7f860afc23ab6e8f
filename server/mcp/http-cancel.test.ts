import { describe, expect, it } from 'vitest';
import { HttpCalls } from './http-cancel.js';

describe('HttpCalls', () => {
  it("cancels the caller's call by request id, once", () => {
    const calls = new HttpCalls();
    let n = 0;
    calls.add('a', 7, () => n++);
    expect(calls.cancel('a', 7)).toBe(true);
    expect(calls.cancel('a', 7)).toBe(false);
    expect(n).toBe(1);
  });

  it("never cancels another caller's call with the same request id", () => {
    const calls = new HttpCalls();
    const hit: string[] = [];
    calls.add('a', 1, () => hit.push('a'));
    calls.add('b', 1, () => hit.push('b'));
    expect(calls.cancel('b', 1)).toBe(true);
    expect(hit).toEqual(['b']);
    expect(calls.cancel('c', 1)).toBe(false);
    expect(hit).toEqual(['b']);
  });

  it('keeps a string id apart from the number it spells', () => {
    const calls = new HttpCalls();
    let n = 0;
    calls.add('a', 1, () => n++);
    expect(calls.cancel('a', '1')).toBe(false);
    expect(n).toBe(0);
  });

  it('forgets an ended call, and an old forget does not drop a newer call under the same key', () => {
    const calls = new HttpCalls();
    let n = 0;
    const forgetOld = calls.add('a', 1, () => n++);
    forgetOld();
    expect(calls.cancel('a', 1)).toBe(false);
    const forgetFirst = calls.add('a', 2, () => undefined);
    calls.add('a', 2, () => n++);
    forgetFirst();
    expect(calls.cancel('a', 2)).toBe(true);
    expect(n).toBe(1);
    expect(calls.size).toBe(0);
  });
});
