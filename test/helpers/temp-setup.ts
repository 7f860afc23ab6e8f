/** Run before every test file (vitest.config.ts `setupFiles`): the temp dirs the file made with `tempDir` go when it ends. */
import { afterAll } from 'vitest';
import { removeTempDirs } from './temp.js';

afterAll(removeTempDirs);
