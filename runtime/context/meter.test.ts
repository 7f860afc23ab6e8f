import { afterEach, describe, expect, it } from 'vitest';
import { estimateRequestTokens } from '../../log/context/tokens.js';
import { createHarness, type Harness } from '../../test/helpers/harness.js';

let h: Harness | undefined;
afterEach(() => h?.cleanup());

const estimateNow = (h: Harness) => {
  const r = h.requests.at(-1)!.request;
  return estimateRequestTokens({ system: r.system, tools: r.tools, messages: h.session.recorder.projection.messages });
};

describe('the token meter', () => {
  it('without reported usage, measures the estimate of the next request, kept incrementally, and says it is an estimate', async () => {
    h = createHarness((_r, i) => (i < 3 ? { text: 'looking', toolCalls: [{ name: 'list_dir', arguments: {} }] } : { text: 'done 😀' }));
    await h.session.run('hi');
    const m = h.session.meter.measure();
    expect(m).toMatchObject({ source: 'estimate', tokens: estimateNow(h) });
    // No window known for this model: the pressure guard cannot fire.
    expect(m.limit).toBe(Number.MAX_SAFE_INTEGER);
  });

  it("with reported usage, carries the provider's count forward by the estimated growth since", async () => {
    h = createHarness((_r, i) => (i === 0 ? { toolCalls: [{ name: 'list_dir', arguments: {} }], usage: { inputTokens: 5000, outputTokens: 7 } } : { text: 'done', usage: { inputTokens: 5100, outputTokens: 3 } }), { contextWindow: 10_000 });
    await h.session.run('hi');
    const m = h.session.meter.measure();
    const second = h.requests[1]!.request;
    const growth = Math.round((estimateNow(h) * 4 - estimateRequestTokens(second) * 4) / 4);
    expect(m.source).toBe('reported');
    expect(Math.abs(m.tokens - (5100 + growth))).toBeLessThanOrEqual(1);
    expect(m).toMatchObject({ window: 10_000, limit: 8000 });
  });

  it('learns a smaller window from an overflow', async () => {
    h = createHarness((_r, i) => (i === 0 ? { error: { code: 'CONTEXT_WINDOW_EXCEEDED', message: 'too long' } } : { text: 'ok' }), { contextWindow: 1_000_000 });
    expect(h.session.meter.window).toBe(1_000_000);
    await h.session.run('hello there');
    expect(h.session.meter.window).toBeLessThan(1_000_000);
    expect(h.session.meter.knowsWindow).toBe(true);
  });
});
