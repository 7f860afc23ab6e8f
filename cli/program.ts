/** The `bridle` program: the command table (`commands.ts`), parsed; a failure becomes one line and an exit code (`exit-code.ts`). */
import { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { addCommands } from './commands.js';
import { exitCodeOf } from './exit-code.js';

const version = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

const AFTER_HELP = `
Exit codes: 0 turn done, 1 turn failed or setup problem, 2 usage error or corrupt log, 130 cancelled.
Environment: OPENAI_API_KEY, OPENAI_BASE_URL, BRIDLE_MODEL, BRIDLE_HOME (default ~/.bridle), BRIDLE_TOKEN (serve).
Product: rows from bundles, then --profile, $BRIDLE_HOME/config.yaml, --patch, the environment, the flags; see bridle config --dump.
`;

export async function main(argv: string[]): Promise<number> {
  let code = 0;
  const program = new Command('bridle')
    .description('An agent harness built as XState actors over an append-only session log.')
    .version(version)
    .exitOverride()
    .addHelpText('after', AFTER_HELP)
    .configureOutput({
      writeErr: (s) => process.stderr.write(s),
      // Commander's own errors (unknown command or option, missing argument) as one `bridle:` line.
      outputError: (s, write) => write(`bridle: ${s.replace(/^error: /, '').trim().replace(/\s*\n\s*/g, ' ')}${/unknown command/.test(s) && !/Did you mean/.test(s) ? ' (see bridle --help)' : ''}\n`),
    });

  addCommands(program, version, (c) => (code = c));

  try {
    await program.parseAsync(argv, { from: 'user' });
    return code;
  } catch (err) {
    return exitCodeOf(err);
  }
}
