/**
 * The command table: every command, its flags and help, grouped by what it does. Each action hands its exit
 * code to `done`; `program.ts` parses and turns a failure into one line and an exit code. Only the table is
 * loaded up front: each action imports its command's implementation when it runs, so `--help` and every
 * command load only what they use (ADR 0099).
 */
import { Argument, Command, Option } from 'commander';
import type { RunFlags } from './run.js';
import type { ReplayFlags } from './replay.js';
import type { ResumeFlags } from './resume.js';
import { safetyOptions } from './safety-flags.js';
import type { SettingFlags } from './settings.js';

type Done = (code: number) => void;

/*
 * The flags and arguments more than one command takes, declared once (each call a new one: commander keeps
 * what it parses on the option).
 */
const storedSession = () => new Argument('<session>', 'session id or log path');
const continueSession = () => new Option('--session <id|path>', 'continue this session');
const readFromStore = () => new Option('--store <url|dir>', 'read it from Postgres (postgres://…) or a JSONL dir');
const entriesAsJson = () => new Option('--json', 'print log entries as JSON lines on stdout');
const inspector = () => new Option('--inspect [url]', 'send actors to an inspector (ws://localhost:8080)');
/** A repeatable flag's values, in order. */
const repeated = (v: string, prev: string[] = []): string[] => [...prev, v];
/** The product of a session command, in `--cwd` or the current directory. */
const productIn = async (flags: RunFlags) => (await import('./settings.js')).composeProduct(flags, { workspace: flags.cwd ?? process.cwd() });
/** The product of a host command (serve, acp, mcp): each session names its own workspace. */
const product = async (flags: SettingFlags) => (await import('./settings.js')).composeProduct(flags);

/** The flags that are also config settings (`bridle config --dump` takes them too). Help lines stay short: one line each at 80 columns. */
function settingOptions(cmd: Command, more: (c: Command) => Command = (c) => c): Command {
  const model = cmd
    .option('--model <id>', 'model id, or scripted:<file> (env: BRIDLE_MODEL)')
    .option('--base-url <url>', 'OpenAI-compatible API URL (env: OPENAI_BASE_URL)')
    .option('--provider <use>', 'openai-chat (default), openai-responses, anthropic')
    .option('--max-output-tokens <n>', 'output token cap per model call')
    .option('--reasoning-effort <e>', 'minimal | low | medium | high | …')
    .option('--thinking-budget <n>', 'anthropic: extended thinking tokens per call');
  const withModel = more(model)
    .addOption(new Option('--approval <policy>', 'never | ask | auto (default: ask)'))
    .option('--max-steps <n>', 'step budget per turn (default: 100)')
    .option('--budget <budget>', 'tokens=N,usd=X for the session and its subagents')
    .option('--context-window <tokens>', 'context window in tokens (default: per model)')
    .option('--stream-idle-ms <ms>', 'model stream idle deadline (default: 300000)')
    .option('--stream-total-ms <ms>', 'model stream total deadline (default: 1800000)')
    .option('--store <url|dir>', 'sessions in Postgres (postgres://…) or a JSONL dir')
    .option('--lease-ms <ms>', 'Postgres session lease (default: 15000)')
    .option('--profile <name>', 'use this profile of $BRIDLE_HOME/config.yaml')
    .option('--patch <file>', 'apply a patch of rows (a YAML or JSON file)');
  return safetyOptions(withModel);
}

/** Every session command's flags: the settings, plus where the tools work. */
function modelOptions(cmd: Command): Command {
  return settingOptions(cmd, (c) =>
    c
      .option('--cwd <dir>', 'workspace the tools work in (default: current dir)')
      .option('--max-depth <n>', 'let subagents go this deep (default: 0, none)')
      .option('--tree-budget <budget>', 'steps=N,tokens=M for all subagents together'),
  );
}

/** The commands that run a session: run, resume, ralph, chat. */
function sessionCommands(program: Command, done: Done): void {
  modelOptions(program.command('run').argument('[prompt]', 'what to do (default: read from stdin)'))
    .summary('run one prompt as a turn')
    .description('run one prompt as a turn, in a new session or one named by --session')
    .addOption(continueSession())
    .addOption(entriesAsJson())
    .addOption(inspector())
    .action(async (prompt: string | undefined, flags: RunFlags & { inspect?: string | boolean }) => {
      const { readPrompt, runPrompt } = await import('./run.js');
      // A bad config fails before anything waits on stdin.
      const composed = await productIn(flags);
      const text = await readPrompt(prompt);
      if (flags.inspect === undefined) done(await runPrompt(text, composed, flags));
      else {
        const { withInspector } = await import('./inspect.js');
        done(await withInspector(flags.inspect, (inspect) => runPrompt(text, composed, flags, { inspect })));
      }
    });

  modelOptions(program.command('resume').addArgument(storedSession()).argument('[prompt]', 'what to do next'))
    .summary('repair a crashed session and go on')
    .description('repair a crashed session (torn tail, unended turn), restore it from its newest checkpoint, then run the prompt; with neither a prompt nor --continue, only repair. An approval left unanswered is asked again and the call runs once if allowed; one answered and not dispatched (a crash, or a fork --answer deny) goes on with its logged answer, not asked again. The session keeps its logged model unless a flag, BRIDLE_MODEL or --profile names one, and its logged policy unless a flag narrows it (--override-policy to widen)')
    .option('--continue', 'let the model carry on instead of a prompt')
    .addOption(entriesAsJson())
    .action(async (session: string, prompt: string | undefined, flags: ResumeFlags) => {
      const { resumeCommand } = await import('./resume.js');
      done(await resumeCommand(session, prompt, flags));
    });

  modelOptions(program.command('ralph').argument('<objective>', 'what the rounds work toward, the same for every round'))
    .summary('rounds of fresh agents until a verified complete')
    .description('the Ralph loop: each round a fresh agent that gets only the objective, its round and the cap, and the last round\'s handoff; a claim of complete is checked (--verify, --verifier) before it is accepted. Exit 0 verified, 1 out of rounds or blocked, 130 cancelled')
    .option('--rounds <n>', 'most rounds (default: 5)')
    .option('--verify <command>', 'check a claim; exit 0 = verified (sandboxed)')
    .option('--verifier', 'also check it with a read-only agent')
    .action(async (objective: string, flags: import('./ralph.js').RalphFlags) => {
      const { ralphCommand } = await import('./ralph.js');
      done(await ralphCommand(objective, flags));
    });

  modelOptions(program.command('chat'))
    .summary('a line-based chat over one session')
    .description('a line-based chat over one session: answers stream, approvals are asked inline; /compact, /context, /help, /exit; Ctrl-C cancels the turn, Ctrl-D exits')
    .addOption(continueSession())
    .action(async (flags: RunFlags) => {
      const { chatCommand } = await import('./chat.js');
      done(await chatCommand(await productIn(flags), flags));
    });
}

/** The commands that read stored logs and run nothing: replay, trace, cost, sessions, fork. */
function logCommands(program: Command, done: Done, version: string): void {
  program
    .command('replay')
    .addArgument(storedSession())
    .summary('verify a session log, show its timeline')
    .description('verify a session log and print its timeline; runs no tool (exit 2 on a corrupt log)')
    .option('--json', 'print the verdict as JSON: { ok, violations, totals }')
    .option('--html <file>', 'also write the session as a self-contained HTML page')
    .option('--machines', 're-run it through the machines; exit 2 unless byte for byte')
    .option('--cost', 'also tokens and cost per step, turn, session and tree')
    .option('--profile <name>', 'product profile (the loop of --machines, prices of --cost)')
    .option('--patch <file>', 'apply a patch of rows to that product (a YAML or JSON file)')
    .addOption(readFromStore())
    .action(async (session: string, flags: ReplayFlags) => {
      const { replayCommand } = await import('./replay.js');
      done(await replayCommand(session, flags));
    });

  program
    .command('trace')
    .addArgument(storedSession())
    .summary('a stored session as an OpenTelemetry trace')
    .description('a stored session and its subagents as an OpenTelemetry trace (GenAI conventions): a tree of spans, OTLP/JSON on stdout (--json), or sent to an OTLP/HTTP endpoint (--otlp); the same log always gives the same trace; message content only with OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true')
    .option('--json', 'print the trace as OTLP/JSON (an ExportTraceServiceRequest)')
    .option('--otlp <url>', 'send it to this OTLP/HTTP endpoint (…/v1/traces)')
    .addOption(readFromStore())
    .action(async (session: string, flags: import('./trace.js').TraceFlags) => {
      const { traceCommand } = await import('./trace.js');
      done(await traceCommand(session, flags, version));
    });

  program
    .command('cost')
    .addArgument(storedSession())
    .summary('what a stored session cost, per step, turn and subagent')
    .description('tokens and US dollars of a stored session per step, per turn, per session and for its whole subagent tree, priced with the prices row (list prices with their date; override them in config); a scripted model costs nothing')
    .option('--json', 'print the report as JSON')
    .addOption(readFromStore())
    .option('--profile <name>', 'compose from this profile (its prices row)')
    .action(async (session: string, flags: import('./cost.js').CostFlags) => {
      const { costCommand } = await import('./cost.js');
      done(await costCommand(session, flags));
    });

  program
    .command('sessions')
    .summary('list the sessions of a store, with owner and state')
    .description('list the sessions of a store, one line each: id, state (idle, running, interrupted: a turn open and no writer, ended), owner (the writer holding its lock or lease), last seq, workspace; reads only')
    .option('--store <url|dir>', 'Postgres (postgres://…) or a JSONL dir')
    .option('--json', 'print { store, sessions } as JSON')
    .action(async (flags: import('./sessions.js').SessionsFlags) => {
      const { sessionsCommand } = await import('./sessions.js');
      done(await sessionsCommand(flags));
    });

  program
    .command('fork')
    .addArgument(storedSession())
    .summary('a new session from a past point of a log')
    .description('a new session whose log begins with this one\'s, up to the last completed turn at or before --at (default: the end), copied byte for byte under a header of its own; with --answer, one logged approval answered anew at --at (deny: bridle resume <fork> goes on inside that turn with the denial; approve: never an approval by itself, the call is asked again when the fork goes on, and refused under --approval never) or one input replaced (new text; an approval word at an input is refused). Runs no tool and calls no model; prints log: <path> of the fork (exit 2: a point inside a turn, naming the nearest valid ones)')
    .option('--at <seq>', 'the last completed turn at or before this seq')
    .option('--answer <approval|input>', 'what-if at --at: approve|deny, or new input text')
    .addOption(readFromStore())
    .action(async (session: string, flags: import('./fork.js').ForkFlags) => {
      const { forkCommand } = await import('./fork.js');
      done(await forkCommand(session, flags));
    });
}

/** The commands that host sessions for a client: serve (WebSocket), acp (an editor), mcp (an MCP client). */
function hostCommands(program: Command, done: Done): void {
  modelOptions(program.command('serve'))
    .summary('serve sessions over WebSocket JSON-RPC')
    .description('serve sessions over WebSocket JSON-RPC (docs/protocol.md) and the session viewer at /; loopback only unless --host says otherwise')
    .option('--port <n>', 'port (default: 7077; 0 picks a free one)')
    .option('--host <address>', 'address to bind (default: 127.0.0.1)')
    .option('--allow-origin <origin>', 'accept this browser origin too (repeatable)', repeated)
    .option('--allow-cwd <dir>', 'let clients put sessions here too (repeatable)', repeated)
    .option('--max-sessions <n>', 'most sessions open at once (default: 64)')
    .option('--idle-timeout <seconds>', 'close idle sessions after (default: 900; 0: never)')
    .option('--sweep-ms <ms>', 'take over dead owners\' work (default: 5000; 0: off)')
    .addOption(inspector())
    .option('--exit-with-stdin', 'exit when stdin ends (a parent driving this server)')
    .action(async (flags: import('./serve.js').ServeFlags) => {
      const { serveCommand } = await import('./serve.js');
      done(await serveCommand(await product(flags), flags));
    });

  modelOptions(program.command('acp'))
    .summary('be an ACP agent on stdin/stdout (editors)')
    .description('serve the Agent Client Protocol on stdin/stdout for an editor (Zed agent_servers, JetBrains, Neovim, Emacs) or any ACP client; each session opens in the client\'s cwd, approvals are asked of the client; logs in $BRIDLE_HOME/sessions/')
    .action(async (flags: import('./acp.js').AcpFlags) => {
      const { acpCommand } = await import('./acp.js');
      done(await acpCommand(await product(flags), flags));
    });

  modelOptions(program.command('mcp'))
    .summary('be an MCP server: a bridle session as a tool')
    .description('serve MCP on stdin/stdout (or streamable HTTP with --http, on 127.0.0.1 behind a token): the tool bridle_run runs a session on a prompt (a new one, or one named by id) and returns its final answer and log; resources: each stored session\'s log and transcript. Nobody answers approvals: unless a flag or the config file chose one, the policy is never (docs/mcp.md)')
    .option('--http', 'serve streamable HTTP at /mcp instead of stdio')
    .option('--port <n>', 'with --http: port (default: 0, a free one)')
    .option('--host <address>', 'with --http: address to bind (default: 127.0.0.1)')
    .action(async (flags: import('./mcp.js').McpFlags) => {
      const { mcpCommand } = await import('./mcp.js');
      done(await mcpCommand(await product(flags), flags));
    });
}

/** The commands around sessions: eval, viz, config. */
function toolingCommands(program: Command, done: Done): void {
  settingOptions(program.command('eval').argument('[dir]', 'a task folder, or a folder of them'))
    .summary('run tasks N times and score them, or re-score logs')
    .description('run each task of <dir> (a workspace, a prompt, a check command) --runs times, a session per run, then its check in the sandbox (exit 0 passes); print task, model, passes/N, steps, tokens, time. --model scripted: each task\'s scripted.json. Unattended, so --approval defaults to auto. A task\'s workspace must lie in the task set\'s folder or a --workspace-root (default: the git repository the task set is in). --replay re-scores logs: no model is called, no tool runs')
    .option('--runs <n>', 'runs per task (default: 1)')
    .option('--keep', "keep each run's workspace, for --replay")
    .option('--replay <logs...>', 're-score these logs instead of running')
    .option('--json', 'print the results as one JSON document')
    .option('--workspace-root <dir>', "a root task workspaces may lie in (repeatable)", repeated)
    .action(async (dir: string | undefined, flags: import('./eval/command.js').EvalFlags) => {
      const { evalCommand } = await import('./eval/command.js');
      const stop = new AbortController();
      let interrupts = 0;
      const onSigint = () => {
        if (++interrupts > 1) process.exit(130);
        process.stderr.write('\ncancelling the current run… (Ctrl-C again to exit at once)\n');
        stop.abort();
      };
      process.on('SIGINT', onSigint);
      try {
        done(await evalCommand(dir, flags, { out: process.stdout, err: process.stderr, signal: stop.signal }));
      } finally {
        process.off('SIGINT', onSigint);
      }
    });

  program
    .command('viz')
    .summary('regenerate the machine diagrams')
    .description('regenerate every machine\'s diagram in visualizations/ (Mermaid and SVG)')
    .option('--check', 'write nothing; exit 1 if a diagram is stale')
    .action(async (flags: { check?: boolean }) => {
      const { vizCommand } = await import('./viz.js');
      done(await vizCommand(flags));
    });

  settingOptions(program.command('config'))
    .summary('check the config file, or dump it')
    .description('check $BRIDLE_HOME/config.yaml; with --dump, print the composed product: every row, with the layer it came from (bundle, profile, home, patch, env, flag), given the same flags a session command would get')
    .option('--dump', 'print the composed rows (YAML)')
    .option('--json', 'with --dump: print it as JSON')
    .action(async (flags: import('./config/command.js').ConfigCommandFlags) => {
      const { configCommand } = await import('./config/command.js');
      done(await configCommand(flags));
    });
}

/** Adds every command of bridle to `program`; `version` is what `bridle trace` stamps its spans with. */
export function addCommands(program: Command, version: string, done: Done): void {
  sessionCommands(program, done);
  logCommands(program, done, version);
  hostCommands(program, done);
  toolingCommands(program, done);
}
