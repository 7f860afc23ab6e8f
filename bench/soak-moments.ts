/**
 * The soak's kill moments (ADR 0028, 0043): what the model answers in each
 * trial, and when the trial's process is killed.
 */
import { SUMMARY_REQUEST_MARK } from '../log/context/summary-prompt.js';
import { marking, reading, scenarioReply, slowly, usage, type Scenario } from './soak-scenarios.js';
import { logHas, waitFor, type Child } from '../test/fault/cli-world.js';
import { type Reply, streamReply } from '../test/helpers/openai-sse-server.js';
import { textChunks, toolCallChunks } from '../test/helpers/openai-chunks.js';

export const MOMENTS = ['streaming', 'dispatch', 'flush', 'compaction', 'queued', 'workflow', 'delegate'] as const;
export type Moment = (typeof MOMENTS)[number];

/** The longest wait of a kill after its moment begins: the slow replies must outlast it, or the run ends first. */
export const KILL_WITHIN_MS = { streaming: 350, summary: 300 } as const;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** The context window every trial runs with (`--context-window`): small, so the compaction moment's answers fill it. */
export const WINDOW = 16_000;

export interface Trial {
  id: number;
  /** `state`: a generated kill point's trial (its scenario's answers, killed from inside at `killAt`). */
  moment: Moment | 'state';
  /** The scenario a subagent moment or a generated kill point runs (the other moments have their own answers). */
  scenario?: Scenario;
  /** `BRIDLE_SOAK_KILL_AT` for the run: the process kills itself there. */
  killAt?: string;
  rng: () => number;
  phase: 'run' | 'resume';
  /** Bash calls handed out, to name each one's marker line. */
  calls: number;
  /** Model requests of the run phase seen (the streaming trial's kill waits for its first). */
  requests: number;
}

const words = (n: number) => Array.from({ length: n }, (_, i) => `word${i} `).join('');

/** The model's side of each trial: answers follow from the trial's moment and how far its turn has come. */
export function reply(t: Trial, body: { messages: { role: string; content?: unknown }[] }): Reply {
  if (t.scenario && t.scenario !== 'compaction') return scenarioReply(t, t.scenario, body);
  const last = body.messages.at(-1);
  if (last?.role === 'user' && typeof last.content === 'string' && last.content.startsWith(SUMMARY_REQUEST_MARK)) {
    // Slow, so the kill lands inside the compaction.
    return streamReply([...slowly('## Request and intent\nsoak\n## Current work\nmarking\n## Next step\ngo on', 12, 25), usage(300)]);
  }
  if (t.phase === 'resume') return streamReply([...textChunks('carried on after the crash'), usage()]);
  t.requests++;
  // Model requests since the turn's input: how many answers this turn has had.
  const step = body.messages.length - 1 - body.messages.findLastIndex((m) => m.role === 'user');
  switch (t.scenario === 'compaction' ? 'compaction' : t.moment) {
    case 'streaming':
      return streamReply([...slowly(words(60), 60, 8), usage()]);
    case 'dispatch':
      return step === 0 ? streamReply([...toolCallChunks([marking(t, 0.3), marking(t, 0.3)]), usage()]) : streamReply([...textChunks('both ran'), usage()]);
    case 'flush':
      // A read-only call before each marking one: its dispatch and result are flushed only by the marking call's dispatch (ADR 0072).
      return step < 6 ? streamReply([...toolCallChunks([reading(t), marking(t, 0)]), usage()]) : streamReply([...textChunks('all marked'), usage()]);
    case 'compaction':
    case 'workflow':
    case 'delegate':
    case 'state':
      // Each answer says the context is nearly full, so the turn compacts before its next step: the first
      // compactions find nothing to do or prune the long outputs, the fourth summarizes (a slow request).
      return step < 5 ? streamReply([...toolCallChunks([marking(t, 0, 'seq 1 2000')]), usage(WINDOW - 500)]) : streamReply([...textChunks('compacted and done'), usage()]);
    case 'queued':
      return step === 0 ? streamReply([...toolCallChunks([marking(t, 0.4)]), usage()]) : streamReply([...textChunks('done with that'), usage()]);
  }
}

export const trialOf = (body: { messages?: { role: string; content?: unknown }[] }) => {
  for (const m of body.messages ?? []) {
    const id = m.role === 'user' && typeof m.content === 'string' ? /soak trial (\d+)/.exec(m.content)?.[1] : undefined;
    if (id) return Number(id);
  }
  return undefined;
};

const count = (text: string, kind: string) => text.split(`"kind":"${kind}"`).length - 1;

/** Waits for the trial's kill moment; resolves early when the child exits on its own. */
export async function killMoment(t: Trial, log: () => string, child: Child, stdinLine: (line: string) => void, children: () => string): Promise<string[]> {
  const exited = () => child.proc.exitCode !== null || child.proc.signalCode !== null;
  // Generous: on a loaded machine (two cores, a load of 20) a CLI takes seconds to start; a moment never takes this long on its own.
  const until = (cond: () => boolean, what: string) => waitFor(() => cond() || exited(), 60_000, `trial ${t.id}: ${what}`);
  const acked: string[] = [];
  switch (t.moment) {
    case 'streaming':
      await until(() => t.requests > 0, 'the first model request');
      await sleep(t.rng() * KILL_WITHIN_MS.streaming);
      break;
    case 'dispatch':
      await until(() => logHas(log(), 'tool/dispatch'), 'a dispatch');
      await sleep(t.rng() * 700);
      break;
    case 'flush': {
      // Right as a durable line is written, while its fsync runs (or just after).
      const kinds = ['tool/dispatch', 'tool/result', 'turn/end'] as const;
      const kind = kinds[Math.floor(t.rng() * kinds.length)]!;
      const nth = kind === 'turn/end' ? 1 : 1 + Math.floor(t.rng() * 5);
      await until(() => log().split(`"kind":"${kind}"`).length > nth, `${kind} #${nth}`);
      if (t.rng() < 0.5) await sleep(t.rng() * 2);
      break;
    }
    case 'compaction': {
      // One of the four: at its first line (the quick ones) or inside it (the summary request streams for ~300 ms).
      const nth = 1 + Math.floor(t.rng() * 4);
      await until(() => log().split('"kind":"compaction/start"').length > nth, `compaction #${nth}`);
      await sleep(nth === 4 ? t.rng() * KILL_WITHIN_MS.summary : t.rng() * 2);
      break;
    }
    case 'queued': {
      await until(() => logHas(log(), 'tool/dispatch'), 'the first turn to run its command');
      const text = `soak trial ${t.id}: then the second thing`;
      stdinLine(text);
      await until(() => child.stdout().includes('(queued: it runs after the current turn)'), 'the queued line to be acknowledged');
      if (child.stdout().includes('(queued:')) acked.push(text);
      await sleep(t.rng() * 300);
      break;
    }
    case 'workflow':
    case 'delegate': {
      // While the children run (from a child's first call on), right after a child's dispatch (before its
      // result), or while the parent waits for the rest after the nth child reported.
      const where = Math.floor(t.rng() * 3);
      if (where === 0) {
        await until(() => count(children(), 'tool/call') > 0, "a child's call");
        await sleep(t.rng() * 250);
      } else if (where === 1) {
        const nth = 1 + Math.floor(t.rng() * (t.moment === 'workflow' ? 4 : 1));
        await until(() => count(children(), 'tool/dispatch') >= nth, `child dispatch #${nth}`);
        await sleep(t.rng() * 2);
      } else {
        const nth = 1 + Math.floor(t.rng() * (t.moment === 'workflow' ? 3 : 1));
        await until(() => count(log(), 'subagent/end') >= nth, `subagent/end #${nth}`);
        await sleep(t.rng() * 20);
      }
      break;
    }
    case 'state':
      // The process kills itself at the state's entry (cli/soak-kill.ts): wait for it to die, or to end unkilled.
      await until(() => false, `the kill at ${t.killAt}`);
      break;
  }
  return acked;
}
