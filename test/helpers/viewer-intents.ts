/**
 * The viewer's intent renderer (visualizations/viewer/viewer-intents.js) run
 * in Node: the checked-in script evaluated fresh, drawing into a fake
 * document whose elements print as HTML (text escaped as textContent would be).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RenderIntent } from '../../ports/present.js';
import { viewerDir } from '../../visualizations/paths.js';

const escape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

class FakeElement {
  className = '';
  textContent = '';
  readonly children: FakeElement[] = [];
  constructor(readonly tag: string) {}
  appendChild(c: FakeElement): FakeElement {
    this.children.push(c);
    return c;
  }
  get outerHTML(): string {
    const cls = this.className ? ` class="${escape(this.className)}"` : '';
    const inner = this.children.length ? this.children.map((c) => c.outerHTML).join('') : escape(this.textContent);
    return `<${this.tag}${cls}>${inner}</${this.tag}>`;
  }
}

interface Intents {
  view(intent: unknown): object | null;
  build(doc: { createElement(tag: string): FakeElement }, tree: object): FakeElement;
}

/** A freshly evaluated viewer renderer: the HTML it draws for an intent ('' for none). */
export function viewerRenderer(): (intent: RenderIntent) => string {
  const window: { bridleIntents?: Intents } = {};
  new Function('window', readFileSync(join(viewerDir(), 'viewer-intents.js'), 'utf8'))(window);
  const intents = window.bridleIntents!;
  const doc = { createElement: (tag: string) => new FakeElement(tag) };
  return (intent) => {
    const tree = intents.view(intent);
    return tree ? intents.build(doc, tree).outerHTML : '';
  };
}
