/**
 * Course ch. 1, "a reject still produces a closed turn with zero steps", for
 * its opposite verdict: a pre-step that rewrites the claimed input to nothing
 * closes a durable turn that spent zero steps; the model is sent nothing (no
 * empty user message), the session goes on, and replay gives the log back
 * byte for byte.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { checkCheckpoints } from '../machines/session-fold.js';
import { EMPTY_INPUT_CAUSE } from '../machines/turn.machine.js';
import { verifyLog } from '../log/verify.js';
import type { Plugin } from '../plugins/host.js';
import { replayThroughMachines } from '../replay/replay.js';
import { builtinTools } from '../tools/index.js';
import { createHarness, type Harness } from '../test/helpers/harness.js';

let h: Harness | undefined;
afterEach(() => h?.cleanup());

const kinds = (h: Harness) => h.entries().map((e) => e.kind);
/** Drops a "/noop" input, whitespace and all, the way a slash-command filter would. */
const dropNoop: Plugin = {
  name: 'drop-noop',
  apply: (ctx) => void ctx.hooks.on('pre-step', async (p, next) => next({ ...p, text: p.text.replace(/^\/noop\b\s*/, '') })),
};

describe('an empty rewrite is a zero-step turn (course ch. 1)', () => {
  it('a pre-step rewrite to nothing still closes a durable turn with zero steps, and sends the model nothing', async () => {
    h = createHarness(() => ({ text: 'never asked' }), { preStep: async () => ({ kind: 'enter', text: '  \n' }) });
    const out = await h.session.run('hello');
    expect(out).toMatchObject({ reason: 'completed', steps: 0, cause: EMPTY_INPUT_CAUSE });
    expect(kinds(h)).toEqual(['session/start', 'session/input', 'turn/start', 'turn/end', 'checkpoint']);
    expect(h.entries().find((e) => e.kind === 'turn/end')).toMatchObject({ reason: 'completed', steps: 0 });
    expect(h.requests).toHaveLength(0);
  });

  it('the next turn runs as usual, and replay of a log with an empty rewrite is byte-identical', async () => {
    h = createHarness(() => ({ text: 'ok' }), { plugins: [dropNoop] });
    expect(await h.session.run('/noop   ')).toMatchObject({ reason: 'completed', steps: 0 });
    expect(await h.session.run('/noop and this is said')).toMatchObject({ reason: 'completed', steps: 1 });
    expect(h.requests).toHaveLength(1);
    expect(h.requests[0]!.request.messages).toEqual([{ role: 'user', content: 'and this is said' }]);
    const es = h.entries();
    expect(verifyLog(es, { checkpoints: checkCheckpoints }).violations).toEqual([]);
    const r = await replayThroughMachines(es, builtinTools());
    expect(r.note).toBeUndefined();
    expect(r.identical).toBe(true);
  });
});
