/**
 * The `prompt:skills` row (ADR 0064): the skills found as the session's
 * process opens are listed in the system prompt, a name and a description a
 * line, and the `skill` tool hands the model one's `SKILL.md` body (or a
 * file of its directory) when it asks. The prompt is logged in the
 * `request/header`, the body in the call's `tool/result`, what was found and
 * every warning in a `skills/found` entry: replay reads all three back.
 *
 * With no skills found the row adds nothing (no section, no tool, no
 * entry): the requests are byte for byte those of a product without it.
 */
import { relative, resolve } from 'node:path';
import { z } from 'zod';
import { truncateMiddle } from '../../log/context/truncate.js';
import { HOOKS, PROMPT, SESSION, TOOLS } from '../../ports/index.js';
import type { ZodToolDefinition } from '../../ports/tools.js';
import type { Plugin } from '../../plugins/host.js';
import { isInside } from '../../safety/paths.js';
import { failure, ok } from '../../tools/output.js';
import { homeForms, readConfinedFile } from '../prompt/agents-files.js';
import type { PromptSection } from '../../ports/prompt.js';
import { discoverSkills, type FoundSkills, type Skill } from './discover.js';
import { FsCode } from '../../ports/fs.js';

/** A body or a file handed to the model is cut in the middle past this many code points (AGENTS.md's cap in the prompt). */
export const SKILL_TEXT_CAP = 32_000;

const cut = (text: string, shown: string) => truncateMiddle(text, SKILL_TEXT_CAP * 0.75, SKILL_TEXT_CAP * 0.25, (c) => `\n[… ${c.codePoints} characters of ${shown} left out …]\n`).text;

/** Contract: pure; the prompt's list of skills, undefined when there are none. */
export function skillsSection(skills: readonly Skill[]): PromptSection {
  return {
    id: 'skills',
    order: 300,
    render: () => {
      if (skills.length === 0) return undefined;
      const lines = skills.map((s) => `- ${s.name}: ${s.description.replace(/\s+/g, ' ')}`);
      return ['Skills (instructions for particular tasks): when a task fits one, call `skill` with its name and follow what it says.', ...lines].join('\n');
    },
  };
}

const parameters = z.strictObject({
  name: z.string().describe('The skill, as the prompt lists it.'),
  path: z.string().optional().describe("A file inside the skill's directory (e.g. references/guide.md); default: its SKILL.md."),
});
export type SkillArgs = z.infer<typeof parameters>;

/** Where the model is told to find a skill's other files. */
function filesNote(s: Skill, workspace: string): string {
  if (s.source === 'workspace') return `Its files are in ${relative(workspace, s.dir) || '.'}/ (read them with read_file, run them as it says).`;
  return `Its files are in its directory; read one with skill {"name": "${s.name}", "path": "<file>"}.`;
}

/** The body of a skill, or one of its files, read as it was found (confined to the skill's real directory). */
function activate(s: Skill, path: string | undefined, o: { workspace: string; bridleHome: string }) {
  if (path === undefined) {
    return ok(`<skill name="${s.name}" path="${s.path}">\n${cut(s.body, s.path)}\n</skill>\n${filesNote(s, o.workspace)}`);
  }
  const abs = resolve(s.dir, path);
  const shown = `${s.path.slice(0, -'SKILL.md'.length)}${relative(s.dir, abs)}`;
  if (!isInside(s.dir, abs) || abs === s.dir) return failure('SKILL_PATH_OUTSIDE', `"${path}" is not a file inside the skill ${s.name}'s directory`);
  const got = readConfinedFile(abs, s.dir, s.source === 'workspace' ? homeForms(o.bridleHome) : [], shown);
  if (got === undefined) return failure(FsCode.NOT_FOUND, `the skill ${s.name} has no file "${path}"`);
  if ('note' in got) return failure('SKILL_FILE_NOT_READ', got.note);
  return ok(cut(got.text, shown));
}

/** The `skill` tool over a fixed list. Read-only: it reads what the listing found, confined as the listing was. */
export function skillTool(skills: readonly Skill[], o: { workspace: string; bridleHome: string }): ZodToolDefinition<SkillArgs> {
  return {
    name: 'skill',
    description: "Load a listed skill's instructions (its SKILL.md), or with path one of its files.",
    parameters,
    readOnly: true,
    idempotent: true,
    present: (a) => `skill ${a.name}${a.path ? ` ${a.path}` : ''}`,
    async execute(args) {
      const s = skills.find((x) => x.name === args.name);
      if (!s) return failure('SKILL_NOT_FOUND', `no skill "${args.name}"; the skills are: ${skills.map((x) => x.name).join(', ') || '(none)'}`);
      return activate(s, args.path, o);
    },
  };
}

/** Contract: pure; what the `skills/found` entry records, undefined when there is nothing to say. */
export function foundDraft(found: FoundSkills) {
  if (found.skills.length === 0 && found.warnings.length === 0) return undefined;
  return {
    kind: 'skills/found' as const,
    ignorable: true as const,
    skills: found.skills.map((s) => ({ name: s.name, source: s.source, path: s.path })),
    warnings: found.warnings.map((w) => ({ ...w })),
  };
}

/** The `prompt:skills` row. Skills are found once per process, as it mounts: the list stays the same for its turns. */
export const skillsPlugin: Plugin = {
  name: 'prompt-skills',
  inject: [PROMPT, TOOLS, SESSION, HOOKS],
  config: z.strictObject({}),
  apply(ctx) {
    const s = ctx.get(SESSION);
    const found = discoverSkills(s.cwd, s.bridleHome);
    if (found.skills.length > 0) {
      ctx.prompt.section(skillsSection(found.skills));
      ctx.tools.register(skillTool(found.skills, { workspace: s.cwd, bridleHome: s.bridleHome }));
    }
    let draft = foundDraft(found);
    // Before the first turn this process runs: the log is open by then, and the entry stands outside any turn.
    if (draft) {
      ctx.hooks.on('pre-step', (_p, next) => {
        if (draft) s.record(draft);
        draft = undefined;
        return next();
      });
    }
  },
};
