/**
 * Agent Skills (ADR 0064): a skill is a directory holding a `SKILL.md`
 * whose YAML front matter names it and says when to use it. They are found
 * in the workspace's `.agents/skills/` and in `$BRIDLE_HOME/skills/`, one
 * level deep, in name order; each `SKILL.md` is read as AGENTS.md is
 * (`readConfinedFile`: pinned, one link, its real path inside the workspace,
 * or the home, that it was found in). A skill of the workspace is content,
 * like AGENTS.md, never configuration; a home skill of the same name wins.
 *
 * A skill that breaks the specification's rules is skipped with a named
 * warning; nothing here is fatal.
 */
import { readdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { yaml } from '../yaml.js';
import { codes, type CodeOf } from '../../log/codes.js';
import { isInside } from '../../safety/paths.js';
import { homeForms, readConfinedFile } from '../prompt/agents-files.js';

export type SkillSource = 'workspace' | 'home';

export interface Skill {
  name: string;
  description: string;
  source: SkillSource;
  /** Where its `SKILL.md` is, as shown: `.agents/skills/<name>/SKILL.md` or `$BRIDLE_HOME/skills/<name>/SKILL.md`. */
  path: string;
  /** The skill's directory, absolute and real: what a read of one of its files is confined to. */
  dir: string;
  /** `SKILL.md` after its front matter: what activation hands the model. */
  body: string;
  /** `allowed-tools`, split on spaces: shown, never acted on (ADR 0064). */
  allowedTools: string[];
}

/** Why a skill was skipped or read with a warning: the code of its `SkillWarning`. */
export const SkillWarning = codes({
  SKILL_NOT_READ: 'The SKILL.md could not be read (confinement or I/O).',
  SKILL_FILE_MISSING: 'The skill\'s directory has no SKILL.md (or it went away while it was read).',
  SKILL_FRONT_MATTER_INVALID: 'The YAML front matter is missing or unreadable.',
  SKILL_NAME_INVALID: 'The name is not 1–64 of a-z, 0-9 and single hyphens inside.',
  SKILL_NAME_MISMATCH: 'The name is not its directory\'s name.',
  SKILL_NAME_DUPLICATE: 'A skill of the same name was found first; this one is skipped.',
  SKILL_DESCRIPTION_MISSING: 'The skill has no description.',
  SKILL_DESCRIPTION_TOO_LONG: 'The description is past its length limit.',
  SKILL_FIELD_INVALID: 'An optional field (license, compatibility, metadata, allowed-tools) has the wrong shape.',
  SKILL_FIELD_UNKNOWN: 'A field not in the specification; it is ignored.',
  SKILLS_DIR_OUTSIDE: 'A skills directory leads outside its root; none of its skills are read.',
  SKILLS_TOO_MANY: 'More skills than are listed; the rest are left out.',
});
export type SkillWarningCode = CodeOf<typeof SkillWarning>;

export interface SkillWarning {
  code: SkillWarningCode;
  /** The skill's directory or `SKILL.md`, as shown. */
  path: string;
  message: string;
}

export interface FoundSkills {
  skills: Skill[];
  warnings: SkillWarning[];
}

/** The specification's limits. */
export const SKILL_NAME_MAX = 64;
export const SKILL_DESCRIPTION_MAX = 1024;
export const SKILL_COMPATIBILITY_MAX = 500;
/** The most skills a session lists; past it the rest are named in one warning. */
export const SKILLS_MAX = 64;

const NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const KNOWN_FIELDS = new Set(['name', 'description', 'license', 'compatibility', 'metadata', 'allowed-tools']);
const FRONT = /^\uFEFF?---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/;

interface Place {
  source: SkillSource;
  /** The skills directory itself. */
  dir: string;
  /** What every file read for it must stay inside. */
  root: string;
  shown: string;
  /** What every file read for it must stay out of. */
  homes: string[];
}

/** Where skills are looked for: the workspace's first (shown relative to it), then the home's. */
function places(workspace: string, bridleHome: string | undefined): Place[] {
  const out: Place[] = [{ source: 'workspace', dir: join(workspace, '.agents', 'skills'), root: workspace, shown: '.agents/skills', homes: homeForms(bridleHome) }];
  if (bridleHome !== undefined) out.push({ source: 'home', dir: join(bridleHome, 'skills'), root: bridleHome, shown: '$BRIDLE_HOME/skills', homes: [] });
  return out;
}

/** The names of the skill directories in `dir`, sorted; a skills directory whose real path leaves `root` is refused whole. */
function entries(dir: string, root: string, shown: string, warn: (w: SkillWarning) => void): string[] {
  let real: string;
  let realRoot: string;
  try {
    real = realpathSync(dir);
    realRoot = realpathSync(root);
  } catch {
    return [];
  }
  if (!isInside(realRoot, real)) {
    warn({ code: SkillWarning.SKILLS_DIR_OUTSIDE, path: shown, message: `${shown} leads outside ${root} (to ${real}); none of its skills are read` });
    return [];
  }
  try {
    return readdirSync(real, { withFileTypes: true })
      .filter((d) => d.isDirectory() || d.isSymbolicLink())
      .map((d) => d.name)
      .sort();
  } catch {
    return [];
  }
}

/** Contract: pure; the front matter and body of a `SKILL.md`, or why it has none that can be read. */
export function splitFrontMatter(text: string): { fields: Record<string, unknown>; body: string } | { problem: string } {
  const m = FRONT.exec(text);
  if (!m) return { problem: 'it does not start with YAML front matter between --- lines' };
  let fields: unknown;
  try {
    fields = yaml().parse(m[1]!);
  } catch (err) {
    return { problem: `its front matter is not YAML (${(err as Error).message.split('\n')[0]})` };
  }
  if (fields === null || typeof fields !== 'object' || Array.isArray(fields)) return { problem: 'its front matter is not a mapping' };
  return { fields: fields as Record<string, unknown>, body: text.slice(m[0].length).trim() };
}

/** Contract: pure; the specification's checks on one skill's fields, a warning each; `skip` when the skill may not be listed. */
export function checkFields(fields: Record<string, unknown>, dirName: string, shown: string): { warnings: SkillWarning[]; skip: boolean } {
  const out: SkillWarning[] = [];
  const w = (code: SkillWarningCode, message: string) => out.push({ code, path: shown, message });
  const { name, description, compatibility, metadata } = fields;
  if (typeof name !== 'string' || name.length < 1 || name.length > SKILL_NAME_MAX || !NAME.test(name)) {
    w(SkillWarning.SKILL_NAME_INVALID, `name ${JSON.stringify(name ?? null)} is not 1–${SKILL_NAME_MAX} of a-z, 0-9 and single hyphens inside`);
  } else if (name !== dirName) w(SkillWarning.SKILL_NAME_MISMATCH, `name "${name}" is not its directory's name "${dirName}"`);
  if (typeof description !== 'string' || description.trim() === '') w(SkillWarning.SKILL_DESCRIPTION_MISSING, 'it has no description');
  else if (description.length > SKILL_DESCRIPTION_MAX) w(SkillWarning.SKILL_DESCRIPTION_TOO_LONG, `its description is ${description.length} characters, past ${SKILL_DESCRIPTION_MAX}`);
  if (fields.license !== undefined && typeof fields.license !== 'string') w(SkillWarning.SKILL_FIELD_INVALID, 'license is not a string');
  if (compatibility !== undefined && (typeof compatibility !== 'string' || compatibility.length > SKILL_COMPATIBILITY_MAX)) w(SkillWarning.SKILL_FIELD_INVALID, `compatibility is not a string of at most ${SKILL_COMPATIBILITY_MAX} characters`);
  if (metadata !== undefined && (metadata === null || typeof metadata !== 'object' || Array.isArray(metadata) || Object.values(metadata).some((v) => typeof v !== 'string'))) {
    w(SkillWarning.SKILL_FIELD_INVALID, 'metadata is not a mapping of strings to strings');
  }
  if (fields['allowed-tools'] !== undefined && typeof fields['allowed-tools'] !== 'string') w(SkillWarning.SKILL_FIELD_INVALID, 'allowed-tools is not a space-separated string');
  const skip = out.length > 0;
  // An unknown field (another agent's extension) is noted; the skill is still listed.
  for (const k of Object.keys(fields)) if (!KNOWN_FIELDS.has(k)) w(SkillWarning.SKILL_FIELD_UNKNOWN, `field "${k}" is not in the specification; it is ignored`);
  return { warnings: out, skip };
}

/** One candidate directory: a skill, or the warnings that say why it is not one. */
function readSkill(place: Place, dirName: string): { skill?: Skill; warnings: SkillWarning[] } {
  const dirShown = `${place.shown}/${dirName}`;
  const shown = `${dirShown}/SKILL.md`;
  const got = readConfinedFile(join(place.dir, dirName, 'SKILL.md'), place.root, place.homes, shown);
  if (got === undefined) return { warnings: [{ code: SkillWarning.SKILL_FILE_MISSING, path: dirShown, message: `${dirShown} has no SKILL.md` }] };
  if ('note' in got) return { warnings: [{ code: SkillWarning.SKILL_NOT_READ, path: shown, message: got.note.slice(1, -1) }] };
  const split = splitFrontMatter(got.text);
  if ('problem' in split) return { warnings: [{ code: SkillWarning.SKILL_FRONT_MATTER_INVALID, path: shown, message: `${shown}: ${split.problem}` }] };
  const checked = checkFields(split.fields, dirName, shown);
  if (checked.skip) return { warnings: checked.warnings };
  let dir: string;
  try {
    dir = realpathSync(join(place.dir, dirName));
  } catch {
    return { warnings: [{ code: SkillWarning.SKILL_FILE_MISSING, path: dirShown, message: `${dirShown} went away while it was read` }] };
  }
  const f = split.fields as { name: string; description: string; 'allowed-tools'?: string };
  const allowedTools = (f['allowed-tools'] ?? '').split(/\s+/).filter(Boolean);
  return { skill: { name: f.name, description: f.description.trim(), source: place.source, path: shown, dir, body: split.body, allowedTools }, warnings: checked.warnings };
}

/**
 * The session's skills: the workspace's and the home's, the home's winning a
 * name both have, at most `SKILLS_MAX`, sorted by name.
 * Contract: never throws and never blocks on a FIFO; deterministic for the same files.
 */
export function discoverSkills(workspace: string, bridleHome?: string): FoundSkills {
  const warnings: SkillWarning[] = [];
  const byName = new Map<string, Skill>();
  for (const place of places(workspace, bridleHome).reverse()) {
    for (const dirName of entries(place.dir, place.root, place.shown, (w) => warnings.push(w))) {
      const got = readSkill(place, dirName);
      warnings.push(...got.warnings);
      if (!got.skill) continue;
      const held = byName.get(got.skill.name);
      if (held) {
        warnings.push({ code: SkillWarning.SKILL_NAME_DUPLICATE, path: got.skill.path, message: `skill "${got.skill.name}" of ${got.skill.path} is skipped: ${held.path} has its name` });
        continue;
      }
      byName.set(got.skill.name, got.skill);
    }
  }
  const skills = [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  if (skills.length > SKILLS_MAX) {
    const left = skills.splice(SKILLS_MAX);
    warnings.push({ code: SkillWarning.SKILLS_TOO_MANY, path: left[0]!.path, message: `only ${SKILLS_MAX} skills are listed; left out: ${left.map((s) => s.name).join(', ')}` });
  }
  return { skills, warnings };
}
