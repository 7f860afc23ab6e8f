/** Where the compiled MCP fixture server is (`npm run build` puts it there), for tests that start it as a process. */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const FIXTURE = fileURLToPath(new URL('../../dist/test/helpers/mcp-fixture-server.js', import.meta.url));

/** Contract: throws, saying what to run, when the fixture has not been built. */
export function requireFixture(): string {
  if (!existsSync(FIXTURE)) throw new Error(`${FIXTURE} is missing: run npm run build first`);
  return FIXTURE;
}
