/** The `system` provider of the clock seam: the machine's own clock. The only place bridle reads real time for the log. */
import { z } from 'zod';
import type { Clock } from '../../log/clock.js';
import { CLOCK } from '../../ports/index.js';
import { defineProvider } from '../../ports/provider.js';

export const systemClock = defineProvider({ seam: CLOCK, name: 'system', config: z.strictObject({}), create: (): Clock => Date.now });

/** The `fixed` provider: starts at `start` (an ISO time) and advances `stepMs` per reading, so two runs on two simulated days log the same bytes apart from `at`. */
export const fixedClock = defineProvider({
  seam: CLOCK,
  name: 'fixed',
  config: z.strictObject({ start: z.iso.datetime(), stepMs: z.int().nonnegative().default(1) }),
  create: (c): Clock => {
    let t = Date.parse(c.start);
    return () => {
      const now = t;
      t += c.stepMs;
      return now;
    };
  },
});
