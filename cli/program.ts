/** The command table. Each command returns its exit code; errors become one line, never a stack trace. */
import { Command, CommanderError, Option } from 'commander';
import { readFileSync } from 'node:fs';
import { SetupError, UsageError } from './errors.js';
import { readPrompt, runPrompt, type RunFlags } from './run.js';
import { replayCommand, type ReplayFlags } from './replay.js';
import { resumeCommand, type ResumeFlags } from './resume.js';
import { safetyOptions } from './safety-flags.js';

const version = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

function modelOptions(cmd: Command): Command {
  const withModel = cmd
    .option('--model <id>', 'model id for an OpenAI-compatible server, or scripted:<file>')
    .option('--base-url <url>', 'OpenAI-compatible base URL (default: $OPENAI_BASE_URL, else api.openai.com); key from $OPENAI_API_KEY')
    .option('--cwd <dir>', 'the workspace the tools work in (default: the current directory)')
    .addOption(new Option('--approval <policy>', 'never | ask | auto (default: ask)'))
    .option('--max-steps <n>', 'step budget per turn (default 100)')
    .option('--context-window <tokens>', "the model's context window; compaction keeps every request under it (default: known for some models)")
    .option('--json', 'print log entries as JSON lines on stdout');
  return safetyOptions(withModel);
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
    .option('--inspect [url]', 'report every actor to a Stately inspector over WebSocket (default ws://localhost:8080)')
    .action(async (prompt: string | undefined, flags: RunFlags & { inspect?: string | boolean }) => {
      const text = await readPrompt(prompt);
      if (flags.inspect === undefined) code = await runPrompt(text, flags);
      else {
        const { withInspector } = await import('./inspect.js');
        code = await withInspector(flags.inspect, (inspect) => runPrompt(text, flags, { inspect }));
      }
    });

  modelOptions(program.command('resume').argument('<session>', 'session id or log path').argument('[prompt]', 'what to do next'))
    .description('repair a crashed session (torn tail, unended turn), restore it from its newest checkpoint, then run the prompt')
    .option('--continue', 'ask the model to carry on with the interrupted work instead of a prompt')
    .action(async (session: string, prompt: string | undefined, flags: ResumeFlags) => {
      code = await resumeCommand(session, prompt, flags);
    });

  modelOptions(program.command('chat'))
    .description('a line-based chat over one session: answers stream, approvals are asked inline, /compact compacts, Ctrl-C cancels the turn, Ctrl-D exits')
    .option('--session <id|path>', 'continue this session')
    .action(async (flags: RunFlags) => {
      const { chatCommand } = await import('./chat.js');
      code = await chatCommand(flags);
    });

  program
    .command('replay')
    .argument('<session>', 'session id or log path')
    .description('verify a session log and print its timeline; runs no tool (exit 2 on a corrupt log)')
    .option('--json', 'print the verdict as JSON: { ok, violations, totals }')
    .option('--html <file>', 'also write the session as one self-contained HTML page: statecharts, timeline, a slider to scrub through the log')
    .action(async (session: string, flags: ReplayFlags) => {
      code = await replayCommand(session, flags);
    });

  modelOptions(program.command('serve'))
    .description('serve sessions over WebSocket JSON-RPC (docs/protocol.md) and the session viewer at /; loopback only unless --host says otherwise')
    .option('--port <n>', 'port to listen on (default 7077; 0 picks a free one)')
    .option('--host <address>', 'address to bind (default 127.0.0.1); anything else prints a warning')
    .option('--allow-origin <origin>', 'a browser origin allowed besides the server\'s own (repeatable)', (v: string, prev: string[] = []) => [...prev, v])
    .option('--inspect [url]', 'report every actor to a Stately inspector over WebSocket (default ws://localhost:8080)')
    .action(async (flags: import('./serve.js').ServeFlags) => {
      const { serveCommand } = await import('./serve.js');
      code = await serveCommand(flags);
    });

  program
    .command('viz')
    .description('regenerate every machine\'s diagram in visualizations/ (Mermaid and SVG)')
    .option('--check', 'write nothing; exit 1 if a checked-in diagram is stale')
    .action(async (flags: { check?: boolean }) => {
      const { vizCommand } = await import('./viz.js');
      code = await vizCommand(flags);
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
