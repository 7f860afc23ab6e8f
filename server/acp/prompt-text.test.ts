import { describe, expect, it } from 'vitest';
import { promptText, PromptContentError } from './prompt-text.js';

describe('a prompt\'s content blocks as one text', () => {
  it('joins text, resource links and embedded text resources, in order', () => {
    expect(
      promptText([
        { type: 'text', text: 'Look at' },
        { type: 'resource_link', name: 'a.ts', uri: 'file:///ws/a.ts' },
        { type: 'resource', resource: { uri: 'file:///ws/b.ts', text: 'const b = 1;' } },
      ]),
    ).toBe('Look at\n[@a.ts](file:///ws/a.ts)\n<context uri="file:///ws/b.ts">\nconst b = 1;\n</context>');
  });

  it('refuses by name what bridle does not take: images, audio, binary resources, an empty prompt', () => {
    expect(() => promptText([{ type: 'image', data: 'AA==', mimeType: 'image/png' }])).toThrow(/an image/);
    expect(() => promptText([{ type: 'audio', data: 'AA==', mimeType: 'audio/wav' }])).toThrow(/audio/);
    expect(() => promptText([{ type: 'resource', resource: { uri: 'file:///x.bin', blob: 'AA==' } }])).toThrow(PromptContentError);
    expect(() => promptText([])).toThrow(/empty/);
    expect(() => promptText([{ type: 'text', text: '  ' }])).toThrow(/empty/);
  });
});
