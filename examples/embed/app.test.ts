import { describe, expect, it } from 'vitest';
import { ask } from './app.js';

describe('the embedding example', () => {
  it("runs bridle's session machine with the app's own model and tool", async () => {
    expect(await ask('What is the weather in Lisbon?')).toBe('Right now: Lisbon: 21°C, clear sky.');
  });

  it('fits in 40 lines', async () => {
    const { readFileSync } = await import('node:fs');
    expect(readFileSync(new URL('./app.ts', import.meta.url), 'utf8').trimEnd().split('\n').length).toBeLessThan(40);
  });
});
