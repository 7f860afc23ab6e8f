/**
 * The `memory` subprocess provider: the stand-in for a world with no
 * processes. Without scripts it refuses every command with
 * `SUBPROCESS_UNAVAILABLE`; with scripts it answers a command the first
 * script's `match` finds in it (the script of `bash -c <script>`, else the
 * argv joined by spaces), and refuses the rest the same way. Nothing runs.
 */
import { z } from 'zod';
import { SUBPROCESS } from '../../ports/index.js';
import { defineProvider } from '../../ports/provider.js';
import { SUBPROCESS_UNAVAILABLE, type Subprocess, type SubprocessSpec } from '../../ports/subprocess.js';
import { ToolError } from '../../ports/tool-error.js';
import { commandEnv } from '../../safety/command-env.js';
import { OutputCapture } from './capture.js';

const Pattern = z.union([z.instanceof(RegExp), z.string().min(1)]).transform((p, ctx) => {
  if (p instanceof RegExp) return p;
  try {
    return new RegExp(p);
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: `not a regular expression: ${(err as Error).message}` });
    return z.NEVER;
  }
});

export const MemorySubprocessConfig = z.strictObject({
  scripts: z
    .array(
      z.strictObject({
        match: Pattern.describe('A regular expression (JavaScript syntax) the command must match.'),
        stdout: z.string(),
        stderr: z.string().default(''),
        exitCode: z.number().int().default(0),
      }),
    )
    .default([])
    .describe('Scripted answers, first match wins; no script: every command is refused.'),
  cwd: z.string().default('/workspace').describe('Where commands say they start unless a request says otherwise.'),
  timeoutMs: z.number().int().min(1).default(120_000),
  maxOutputBytes: z.number().int().min(0).default(64 * 1024),
});
export type MemorySubprocessOptions = z.input<typeof MemorySubprocessConfig>;

/** The text a script is matched against. */
function commandOf(spec: SubprocessSpec): string {
  return spec.argv.length === 3 && spec.argv[1] === '-c' ? spec.argv[2]! : spec.argv.join(' ');
}

export function createMemorySubprocess(options: MemorySubprocessOptions = {}): Subprocess {
  const config = MemorySubprocessConfig.parse(options);
  return {
    id: 'memory',
    resolve: (request) => ({
      argv: [...request.argv],
      cwd: request.cwd ?? config.cwd,
      timeoutMs: request.timeoutMs ?? config.timeoutMs,
      maxOutputBytes: request.maxOutputBytes ?? config.maxOutputBytes,
      env: commandEnv(request.env ?? {}),
      // Nothing runs, so nothing is written and nothing is sent.
      sandbox: { by: 'memory', mode: 'read-only', network: false },
    }),
    async run(spec, signal) {
      const command = commandOf(spec);
      const script = config.scripts.find((s) => s.match.test(command));
      if (!script) {
        const why = config.scripts.length === 0 ? 'this session runs no commands' : 'no scripted answer matches it';
        throw new ToolError(SUBPROCESS_UNAVAILABLE, `No subprocess is available: ${JSON.stringify(command)} did not run (${why}).`);
      }
      if (signal.aborted) return { exitCode: null, signal: null, stdout: '', stderr: '', timedOut: false, truncatedBytes: 0 };
      const capture = new OutputCapture(spec.maxOutputBytes);
      capture.push('stdout', Buffer.from(script.stdout));
      capture.push('stderr', Buffer.from(script.stderr));
      return { exitCode: script.exitCode, signal: null, timedOut: false, ...capture.finish() };
    },
  };
}

export const memorySubprocessProvider = defineProvider({
  seam: SUBPROCESS,
  name: 'memory',
  config: MemorySubprocessConfig,
  create: (config) => createMemorySubprocess(config),
});
