import { describe, expect, it } from 'vitest';
import { redactUrl as storeLocation } from '../adapters/store/postgres-pool.js';
import { isSecretKey, redactConfig, redactText, redactUrl } from './redact.js';

describe('what bridle shows of a secret (issue 20, item 11)', () => {
  it('knows secret headers and keys, and leaves the others', () => {
    for (const k of ['Authorization', 'Proxy-Authorization', 'X-Api-Key', 'Cookie', 'Set-Cookie', 'apiKey', 'api_key', 'OPENAI_API_KEY', 'token', 'accessToken', 'GITHUB_TOKEN', 'x-auth-token', 'clientSecret', 'password', 'PGPASSWORD', 'privateKey', 'key', 'aws_access_key_id'])
      expect(isSecretKey(k), k).toBe(true);
    for (const k of ['command', 'args', 'url', 'timeoutMs', 'maxTokens', 'model', 'Accept', 'Content-Type', 'keyboard', 'author'])
      expect(isSecretKey(k), k).toBe(false);
  });

  it('hides a URL\'s password and secret query values, and leaves a URL with nothing to hide as written', () => {
    expect(redactUrl('postgres://bridle:hunter2@db:5432/x')).toBe('postgres://bridle:***@db:5432/x');
    expect(redactUrl('https://h/mcp?api_key=k1&page=2&token=t')).toBe('https://h/mcp?api_key=***&page=2&token=***');
    expect(redactUrl('http://localhost:11434/v1')).toBe('http://localhost:11434/v1');
    expect(redactUrl('ws://u:p@[not a url')).toBe('ws://u:***@[not a url');
    // The store's locations, as before: no password, no fragment.
    expect(storeLocation('postgres://bridle:pw@127.0.0.1:1/none#x')).toBe('postgres://bridle:***@127.0.0.1:1/none');
    expect(storeLocation('postgres://u@h/db?host=/run/pg&password=p&sslmode=disable')).toBe('postgres://u@h/db?host=%2Frun%2Fpg&password=***&sslmode=disable');
  });

  it('hides URL passwords, auth-scheme credentials and secret query values inside a line of text', () => {
    expect(redactText('cannot reach the session store postgres://u:s3cret@db/x: refused')).toBe('cannot reach the session store postgres://u:***@db/x: refused');
    expect(redactText('401 for Authorization: Bearer abc.def-123 at https://h/m?token=zzz&x=1')).toBe('401 for Authorization: Bearer *** at https://h/m?token=***&x=1');
    expect(redactText('nothing here: a@b, http://host/path')).toBe('nothing here: a@b, http://host/path');
  });

  it('hides every env value, secret headers and keys, URL passwords in a config, deep, and leaves the rest and the given value as they were', () => {
    const config = {
      command: 'npx',
      args: ['--db', 'postgres://a:pw@h/d'],
      env: { GITHUB_TOKEN: 'ghp_x', LOG_LEVEL: 'debug' },
      headers: { Authorization: 'Bearer t0k', Accept: 'application/json', 'X-Api-Key': 'k' },
      nested: { password: 'p', list: [{ secret: 's' }], apiKey: 7 },
      url: 'https://u:p@h/mcp',
      timeoutMs: 1000,
    };
    expect(redactConfig(config)).toEqual({
      command: 'npx',
      args: ['--db', 'postgres://a:***@h/d'],
      env: { GITHUB_TOKEN: '***', LOG_LEVEL: '***' },
      headers: { Authorization: '***', Accept: 'application/json', 'X-Api-Key': '***' },
      nested: { password: '***', list: [{ secret: '***' }], apiKey: 7 },
      url: 'https://u:***@h/mcp',
      timeoutMs: 1000,
    });
    expect(config.env.GITHUB_TOKEN).toBe('ghp_x');
  });
});
