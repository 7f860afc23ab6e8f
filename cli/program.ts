/** The command table. Each command returns its exit code; errors become one line, never a stack trace. */
import { Command, CommanderError, Option } from 'commander';
import { readFileSync } from 'node:fs';
import { SetupError, UsageError } from './errors.js';
import { readPrompt, runPrompt, type RunFlags } from './run.js';

const version = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

function modelOptions(cmd: Command): Command {
  return cmd
    .option('--model <id>', 'model id for an OpenAI-compatible server, or scripted:<file>')
    .option('--base-url <url>', 'OpenAI-compatible base URL (default: $OPENAI_BASE_URL, else api.openai.com); key from $OPENAI_API_KEY')
    .option('--cwd <dir>', 'the workspace the tools work in (default: the current directory)')
    .addOption(new Option('--approval <policy>', 'never | ask | auto (default: ask)'))
    .option('--max-steps <n>', 'step budget per turn (default 100)')
    .option('--json', 'print log entries as JSON lines on stdout');
}

export async function main(argv: string[]): Promise<number> {
  let code = 0;
  const program = new Command('bridle')
    .description('An agent harness built as XState actors over an append-only session log.')
    .version(version)
    .exitOverride()
    .configureOutput({ writeErr: (s) => process.stderr.write(s) });

  modelOptions(program.command('run').argument('[prompt]', 'what to do (default: read from stdin)'))
    .description('run one prompt as a turn, in a new session or one named by --session')
    .option('--session <id|path>', 'continue this session')
    .action(async (prompt: string | undefined, flags: RunFlags) => {
      const text = await readPrompt(prompt);
      code = await runPrompt(text, flags);
    });

  try {
    await program.parseAsync(argv, { from: 'user' });
    return code;
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : 2;
    if (err instanceof UsageError) {
      process.stderr.write(`bridle: ${err.message}\n`);
      return 2;
    }
    if (err instanceof SetupError) {
      process.stderr.write(`bridle: ${err.message}\n`);
      return 1;
    }
    process.stderr.write(`bridle: unexpected failure: ${(err as Error)?.stack ?? String(err)}\n`);
    return 1;
  }
}
