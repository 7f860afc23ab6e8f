/** The `random` provider of the ids seam: a session id is the time it began, then random bits (outside the log path, so real time and randomness are fine here). */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { Ids } from '../../ports/ids.js';
import { IDS } from '../../ports/index.js';
import { defineProvider } from '../../ports/provider.js';

/** `20261201-093012-a1b2c3`. */
export function newSessionId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `${stamp}-${randomBytes(3).toString('hex')}`;
}

export const randomIds = defineProvider({ seam: IDS, name: 'random', config: z.strictObject({}), create: (): Ids => ({ session: () => newSessionId() }) });
