import { describe, expect, it } from 'vitest';
import { SessionStart } from '../log/entries-session.js';
import { createHarness } from '../test/helpers/harness.js';
import { sessionConfig } from './session-config.js';

describe('sessionConfig', () => {
  it('writes only what was set', () => {
    expect(sessionConfig({})).toEqual({});
    expect(sessionConfig({ maxSteps: 7, contextWindow: 4096, compaction: { tailRatio: 0.3 } })).toEqual({ config: { maxSteps: 7, contextWindow: 4096, compaction: { tailRatio: 0.3 } } });
  });

  it('session/start carries it, and it parses', () => {
    const retry = { maxRetries: 1, baseDelayMs: 0, maxDelayMs: 5, retryable: ['SERVER' as const] };
    const h = createHarness(() => ({ text: 'hi' }), { maxSteps: 3, retry, compactThreshold: 0.5 });
    try {
      const start = SessionStart.parse(h.entries()[0]);
      expect(start.config).toEqual({ maxSteps: 3, retry, compactThreshold: 0.5 });
    } finally {
      h.cleanup();
    }
  });
});
