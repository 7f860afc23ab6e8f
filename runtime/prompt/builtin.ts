/**
 * The built-in prompt sections: who the agent is, the tools it has, and the
 * workspace's AGENTS.md instructions. Plugins add their own around them
 * (orders: core 0, tools 100, workspace 200).
 */
import type { ToolSpec } from '../../log/entry-values.js';
import { truncateMiddle } from '../../log/context/truncate.js';
import type { AgentsFile } from './agents-files.js';
import type { PromptSection } from '../../ports/prompt.js';

export const DEFAULT_CORE =
  "You are a careful software engineer working in the user's workspace through tools. Read before you change; run commands to check your work; say plainly what you did and what you found.";

/** AGENTS.md text past this many code points is cut in the middle, with a note. */
const AGENTS_CAP = 32_000;

export const coreSection = (text = DEFAULT_CORE): PromptSection => ({ id: 'core', order: 0, render: () => text });

export function toolsSection(list: readonly ToolSpec[] | (() => readonly ToolSpec[])): PromptSection {
  return {
    id: 'tools',
    order: 100,
    render: () => {
      const tools = typeof list === 'function' ? list() : list;
      if (tools.length === 0) return undefined;
      const first = (d: string) => (d.split(/(?<=\.)\s/)[0] ?? d).trim();
      return ['Tools you can call (paths are relative to the workspace):', ...tools.map((t) => `- ${t.name}: ${first(t.description)}`)].join('\n');
    },
  };
}

export function workspaceSection(read: () => readonly AgentsFile[]): PromptSection {
  return {
    id: 'workspace',
    order: 200,
    render: (vars) => {
      const files = read();
      const head = `Workspace: ${vars.cwd ?? '.'}`;
      if (files.length === 0) return head;
      const body = files.map((f) => {
        const cut = truncateMiddle(f.text.trim(), AGENTS_CAP * 0.75, AGENTS_CAP * 0.25, (c) => `\n[… ${c.codePoints} characters of ${f.path} left out …]\n`);
        return `## ${f.path}\n${cut.text}`;
      });
      return [head, 'Project instructions from AGENTS.md files (outermost first; nearer ones refine farther ones):', ...body].join('\n\n');
    },
  };
}
