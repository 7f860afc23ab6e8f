import { describe, expect, it } from 'vitest';
import { checkAccess, isLoopbackHost, newToken, offeredToken, ownOrigins } from './access.js';

const policy = { token: 'sekrit', origins: new Set(ownOrigins('127.0.0.1', 7077)) };

describe('access', () => {
  it('takes the token from the Authorization header or ?token=', () => {
    expect(offeredToken({ authorization: 'Bearer abc' }, '/')).toBe('abc');
    expect(offeredToken({}, '/?token=xyz')).toBe('xyz');
    expect(offeredToken({ authorization: 'Basic abc' }, '/?token=xyz')).toBeUndefined();
    expect(offeredToken({}, '/')).toBeUndefined();
  });

  it('refuses a missing or wrong token with 401', () => {
    expect(checkAccess({}, '/', policy)).toMatchObject({ ok: false, status: 401 });
    expect(checkAccess({ authorization: 'Bearer nope' }, '/', policy)).toMatchObject({ ok: false, status: 401 });
    expect(checkAccess({}, '/?token=sekri', policy)).toMatchObject({ ok: false, status: 401 });
    expect(checkAccess({ authorization: 'Bearer sekrit' }, '/', policy)).toEqual({ ok: true });
    expect(checkAccess({}, '/?token=sekrit', policy)).toEqual({ ok: true });
  });

  it("lets a browser in only from the server's own origin", () => {
    const ok = (origin: string) => checkAccess({ origin, authorization: 'Bearer sekrit' }, '/', policy);
    expect(ok('http://127.0.0.1:7077')).toEqual({ ok: true });
    expect(ok('http://localhost:7077')).toEqual({ ok: true });
    expect(ok('http://evil.example')).toMatchObject({ ok: false, status: 403 });
    expect(ok('http://localhost:7078')).toMatchObject({ ok: false, status: 403 });
    expect(ok('null')).toMatchObject({ ok: false, status: 403 });
    // The token is checked first: a foreign page without it learns nothing more.
    expect(checkAccess({ origin: 'http://evil.example' }, '/', policy)).toMatchObject({ status: 401 });
  });

  it('knows its own origins', () => {
    expect(ownOrigins('10.0.0.5', 80)).toEqual(['http://10.0.0.5:80']);
    expect(ownOrigins('0.0.0.0', 80)).toEqual([]);
    expect(isLoopbackHost('127.0.0.1') && isLoopbackHost('::1') && isLoopbackHost('localhost')).toBe(true);
    expect(isLoopbackHost('0.0.0.0') || isLoopbackHost('192.168.1.2')).toBe(false);
  });

  it('generates long random tokens', () => {
    const a = newToken();
    expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(newToken()).not.toBe(a);
  });
});
