import { describe, expect, it } from 'vitest';
import { globToRegExp } from './glob-pattern.js';

function matches(glob: string, paths: string[]): string[] {
  const re = globToRegExp(glob);
  return paths.filter((p) => re.test(p));
}

const PATHS = ['a.ts', 'b.js', '.hidden.ts', 'src/a.ts', 'src/x/b.ts', 'src/x/y/c.ts', 'srcx/a.ts', 'lib/a.js', 'README.md'];

describe('globToRegExp', () => {
  it('* stays within one segment', () => {
    expect(matches('*.ts', PATHS)).toEqual(['a.ts', '.hidden.ts']);
    expect(matches('src/*.ts', PATHS)).toEqual(['src/a.ts']);
    expect(matches('src/*', PATHS)).toEqual(['src/a.ts']);
  });

  it('** spans any number of segments, including none', () => {
    expect(matches('**/*.ts', PATHS)).toEqual(['a.ts', '.hidden.ts', 'src/a.ts', 'src/x/b.ts', 'src/x/y/c.ts', 'srcx/a.ts']);
    expect(matches('src/**', PATHS)).toEqual(['src/a.ts', 'src/x/b.ts', 'src/x/y/c.ts']);
    expect(matches('src/**/c.ts', PATHS)).toEqual(['src/x/y/c.ts']);
    expect(matches('src/**/a.ts', PATHS)).toEqual(['src/a.ts']);
    expect(matches('**', PATHS)).toEqual(PATHS);
  });

  it('** inside a segment acts like *', () => {
    expect(matches('src/x**', ['src/xa', 'src/x/a'])).toEqual(['src/xa']);
    expect(matches('a**.ts', PATHS)).toEqual(['a.ts']);
  });

  it('? matches one character but not a slash', () => {
    expect(matches('?.ts', PATHS)).toEqual(['a.ts']);
    expect(matches('src?a.ts', ['src/a.ts', 'srcXa.ts'])).toEqual(['srcXa.ts']);
  });

  it('{a,b} alternatives, nested and with globs inside', () => {
    expect(matches('*.{ts,js}', PATHS)).toEqual(['a.ts', 'b.js', '.hidden.ts']);
    expect(matches('{src,lib}/*.{js,ts}', PATHS)).toEqual(['src/a.ts', 'lib/a.js']);
    expect(matches('{a,{b,README}}.*', PATHS)).toEqual(['a.ts', 'b.js', 'README.md']);
    expect(matches('{src/**/b,lib/a}.*', PATHS)).toEqual(['src/x/b.ts', 'lib/a.js']);
  });

  it('[...] classes, negated ones never matching a slash', () => {
    expect(matches('[ab].*', PATHS)).toEqual(['a.ts', 'b.js']);
    expect(matches('[!a].*', PATHS)).toEqual(['b.js']);
    expect(matches('[a-c].ts', PATHS)).toEqual(['a.ts']);
  });

  it('treats RegExp metacharacters and unbalanced brackets literally', () => {
    expect(matches('a+b(1).$x', ['a+b(1).$x', 'aab(1).$x'])).toEqual(['a+b(1).$x']);
    expect(matches('{a', ['{a', 'a'])).toEqual(['{a']);
    expect(matches('a}', ['a}'])).toEqual(['a}']);
    expect(matches('[a', ['[a'])).toEqual(['[a']);
    expect(matches('[z-a]', ['[z-a]'])).toEqual(['[z-a]']);
    expect(matches('x|y', ['x|y', 'x'])).toEqual(['x|y']);
  });

  it('backslash escapes the next character', () => {
    expect(matches('\\*.ts', ['*.ts', 'a.ts'])).toEqual(['*.ts']);
    expect(matches('\\{a,b\\}', ['{a,b}', 'a'])).toEqual(['{a,b}']);
  });

  it('is anchored at both ends', () => {
    expect(matches('a.ts', PATHS)).toEqual(['a.ts']);
  });
});
