import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkFields, discoverSkills, SKILLS_MAX, splitFrontMatter } from './discover.js';
import { tempDir } from '../../test/helpers/temp.js';

let root: string | undefined;
afterEach(() => root && fs.rmSync(root, { recursive: true, force: true }));

const skillMd = (name: string, description: string, extra = '') => `---\nname: ${name}\ndescription: ${description}\n${extra}---\n\n# ${name}\n\nThe body of ${name}.\n`;

/** A workspace and a home with good skills, bad ones, and links out of both. */
function tree() {
  root = fs.realpathSync(tempDir('bridle-skills-'));
  const ws = path.join(root, 'ws');
  const home = path.join(root, 'home');
  const put = (file: string, text: string) => {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, text);
  };
  const wsSkill = (dir: string, text: string) => put(path.join(ws, '.agents', 'skills', dir, 'SKILL.md'), text);
  wsSkill('pdf-forms', skillMd('pdf-forms', 'Fill in PDF forms. Use when the user has a PDF form to complete.', 'license: MIT\nmetadata:\n  version: "1"\n'));
  wsSkill('Bad_Name', skillMd('Bad_Name', 'x'));
  wsSkill('double--hyphen', skillMd('double--hyphen', 'x'));
  wsSkill('mismatch', skillMd('other-name', 'x'));
  wsSkill('too-long', skillMd('too-long', 'd'.repeat(1025)));
  wsSkill('no-description', '---\nname: no-description\n---\nbody\n');
  wsSkill('no-front', '# just markdown\n');
  wsSkill('bad-yaml', '---\nname: [unclosed\n---\n');
  wsSkill('extra-field', skillMd('extra-field', 'Has a field of another agent.', 'model: fast\n'));
  wsSkill('shared', skillMd('shared', 'The workspace one.'));
  fs.mkdirSync(path.join(ws, '.agents', 'skills', 'empty-dir'));
  // Links out: a skill directory outside the workspace, a SKILL.md to a secret, a SKILL.md into the home.
  put(path.join(root, 'outside', 'escape', 'SKILL.md'), skillMd('escape', 'OUTSIDE SKILL'));
  fs.symlinkSync(path.join(root, 'outside', 'escape'), path.join(ws, '.agents', 'skills', 'escape'));
  put(path.join(root, 'secret.txt'), '---\nname: secret\ndescription: OUTSIDE SECRET\n---\n');
  fs.mkdirSync(path.join(ws, '.agents', 'skills', 'secret'));
  fs.symlinkSync(path.join(root, 'secret.txt'), path.join(ws, '.agents', 'skills', 'secret', 'SKILL.md'));
  put(path.join(home, 'skills', 'home-skill', 'SKILL.md'), skillMd('home-skill', 'From the home.', 'allowed-tools: read_file bash\n'));
  put(path.join(home, 'skills', 'shared', 'SKILL.md'), skillMd('shared', 'The home one.'));
  fs.mkdirSync(path.join(ws, '.agents', 'skills', 'into-home'));
  fs.symlinkSync(path.join(home, 'skills', 'home-skill', 'SKILL.md'), path.join(ws, '.agents', 'skills', 'into-home', 'SKILL.md'));
  return { ws, home };
}

describe('Agent Skills are found in the workspace and the home (issue 23 item 5)', () => {
  it('lists the good ones by name, the home winning a shared name, and never reads through a link out', () => {
    const { ws, home } = tree();
    const found = discoverSkills(ws, home);
    expect(found.skills.map((s) => [s.name, s.source, s.path])).toEqual([
      ['extra-field', 'workspace', '.agents/skills/extra-field/SKILL.md'],
      ['home-skill', 'home', '$BRIDLE_HOME/skills/home-skill/SKILL.md'],
      ['pdf-forms', 'workspace', '.agents/skills/pdf-forms/SKILL.md'],
      ['shared', 'home', '$BRIDLE_HOME/skills/shared/SKILL.md'],
    ]);
    const pdf = found.skills.find((s) => s.name === 'pdf-forms')!;
    expect(pdf.body).toBe('# pdf-forms\n\nThe body of pdf-forms.');
    expect(pdf.dir).toBe(path.join(ws, '.agents', 'skills', 'pdf-forms'));
    expect(found.skills.find((s) => s.name === 'home-skill')!.allowedTools).toEqual(['read_file', 'bash']);
    expect(JSON.stringify(found)).not.toMatch(/OUTSIDE (SKILL|SECRET)/);
  });

  it('names every bad one in a warning and skips it; nothing throws', () => {
    const { ws, home } = tree();
    const byPath = Object.fromEntries(discoverSkills(ws, home).warnings.map((w) => [w.path.replace(/\/SKILL\.md$/, ''), w.code]));
    expect(byPath).toEqual({
      '.agents/skills/Bad_Name': 'SKILL_NAME_INVALID',
      '.agents/skills/double--hyphen': 'SKILL_NAME_INVALID',
      '.agents/skills/mismatch': 'SKILL_NAME_MISMATCH',
      '.agents/skills/too-long': 'SKILL_DESCRIPTION_TOO_LONG',
      '.agents/skills/no-description': 'SKILL_DESCRIPTION_MISSING',
      '.agents/skills/no-front': 'SKILL_FRONT_MATTER_INVALID',
      '.agents/skills/bad-yaml': 'SKILL_FRONT_MATTER_INVALID',
      '.agents/skills/extra-field': 'SKILL_FIELD_UNKNOWN',
      '.agents/skills/shared': 'SKILL_NAME_DUPLICATE',
      '.agents/skills/empty-dir': 'SKILL_FILE_MISSING',
      '.agents/skills/escape': 'SKILL_NOT_READ',
      '.agents/skills/secret': 'SKILL_NOT_READ',
      '.agents/skills/into-home': 'SKILL_NOT_READ',
    });
    const notes = discoverSkills(ws, home).warnings.filter((w) => w.code === 'SKILL_NOT_READ').map((w) => w.message);
    expect(notes.join('\n')).toMatch(/escape\/SKILL\.md leads outside/);
    expect(notes.join('\n')).toMatch(/into-home\/SKILL\.md leads outside/);
  });

  it('a skills directory that is itself a link out of the workspace is refused whole', () => {
    const { ws, home } = tree();
    const ws2 = path.join(root!, 'ws2');
    fs.mkdirSync(path.join(ws2, '.agents'), { recursive: true });
    fs.symlinkSync(path.join(ws, '.agents', 'skills'), path.join(ws2, '.agents', 'skills'));
    const found = discoverSkills(ws2, home);
    expect(found.skills.map((s) => s.source)).toEqual(['home', 'home']);
    expect(found.warnings.map((w) => w.code)).toEqual(['SKILLS_DIR_OUTSIDE']);
  });

  it('lists at most SKILLS_MAX, naming the rest in one warning; no skills directory at all is no warning', () => {
    root = fs.realpathSync(tempDir('bridle-skills-'));
    for (let i = 0; i <= SKILLS_MAX; i++) {
      const name = `s${String(i).padStart(3, '0')}`;
      fs.mkdirSync(path.join(root, '.agents', 'skills', name), { recursive: true });
      fs.writeFileSync(path.join(root, '.agents', 'skills', name, 'SKILL.md'), skillMd(name, 'n'));
    }
    const found = discoverSkills(root, path.join(root, 'no-home'));
    expect(found.skills).toHaveLength(SKILLS_MAX);
    expect(found.warnings.map((w) => [w.code, w.message])).toEqual([['SKILLS_TOO_MANY', `only ${SKILLS_MAX} skills are listed; left out: s064`]]);
    expect(discoverSkills(path.join(root, '.agents'), path.join(root, 'no-home'))).toEqual({ skills: [], warnings: [] });
  });

  it('the front matter and fields are read by the specification’s rules', () => {
    expect(splitFrontMatter('---\r\nname: a\r\ndescription: b\r\n---\r\nbody')).toEqual({ fields: { name: 'a', description: 'b' }, body: 'body' });
    expect(splitFrontMatter('---\n- a\n---\n')).toEqual({ problem: 'its front matter is not a mapping' });
    const codes = (f: Record<string, unknown>) => checkFields({ name: 'a', description: 'b', ...f }, 'a', 'a/SKILL.md').warnings.map((w) => w.code);
    expect(codes({})).toEqual([]);
    expect(codes({ name: 'a'.repeat(65) })).toEqual(['SKILL_NAME_INVALID']);
    expect(codes({ name: '-a' })).toEqual(['SKILL_NAME_INVALID']);
    expect(codes({ description: 'd'.repeat(1024) })).toEqual([]);
    expect(codes({ compatibility: 'c'.repeat(501) })).toEqual(['SKILL_FIELD_INVALID']);
    expect(codes({ metadata: { a: 1 } })).toEqual(['SKILL_FIELD_INVALID']);
    expect(codes({ 'allowed-tools': ['bash'] })).toEqual(['SKILL_FIELD_INVALID']);
    expect(checkFields({ name: 'a', description: 'b', x: 1 }, 'a', 'a/SKILL.md').skip).toBe(false);
  });
});
