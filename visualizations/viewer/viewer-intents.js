/*
 * Render intents in the session viewer (ADR 0067): a finished call's intent,
 * computed by the server (`session/entry.intent`) or embedded by `bridle
 * replay --html`, drawn under its result's row. `view(intent)` is pure: it
 * gives a tree of plain objects ({ tag, cls, text } or { tag, cls, children }),
 * so one intent always draws the same; `build(doc, tree)` makes the elements,
 * every text with textContent, never as HTML. `generic` draws nothing more
 * than the row. Plain browser JavaScript, loaded before viewer.js.
 */
(function (root) {
  'use strict';

  var LINES = 40;
  var HITS = 50;

  function node(tag, cls, text) { return { tag: tag, cls: cls, text: String(text) }; }
  function box(tag, cls, children) { return { tag: tag, cls: cls, children: children }; }
  function more(n, what) { return node('span', 'note', '… ' + n + ' ' + what); }

  function terminal(i) {
    var lines = i.output.split('\n');
    if (lines[lines.length - 1] === '') lines.pop();
    var shown = lines.length > LINES ? lines.slice(-LINES) : lines;
    var out = [node('span', 'cmd', '$ ' + i.command + '\n')];
    if (lines.length > LINES) out.push(more(lines.length - LINES, 'earlier lines\n'));
    out.push(node('span', 'out', shown.join('\n') + (shown.length ? '\n' : '')));
    out.push(node('span', i.exitCode === 0 ? 'exit' : 'exit bad', i.exitCode === null ? 'no exit code' : 'exit code ' + i.exitCode));
    return box('pre', 'intent terminal', out);
  }

  function diff(i) {
    var out = [node('span', 'path', i.path + '\n')];
    var shown = i.lines.slice(0, LINES);
    shown.forEach(function (l, n) {
      out.push(node('span', l.op === '+' ? 'add' : l.op === '-' ? 'del' : 'same', l.op + ' ' + l.text + (n < shown.length - 1 ? '\n' : '')));
    });
    if (i.lines.length > LINES) out.push(more(i.lines.length - LINES, 'more lines'));
    if (!i.lines.length) out.push(node('span', 'note', i.oldText === null ? '(empty file)' : '(no lines)'));
    return box('pre', 'intent diff', out);
  }

  function search(i) {
    var hits = i.matches.slice(0, HITS).map(function (m) {
      var parts = [node('span', 'path', m.path)];
      if (m.line !== undefined) parts.push(node('span', 'line', ':' + m.line), node('span', 'hit', ' ' + (m.text || '')));
      return box('li', 'match', parts);
    });
    if (i.matches.length > HITS) hits.push(box('li', 'note', [more(i.matches.length - HITS, 'more')]));
    i.notes.forEach(function (n) { hits.push(node('li', 'note', n)); });
    var head = node('div', 'query', i.matches.length + (i.matches.length === 1 ? ' match' : ' matches') + ' for ' + i.query);
    return box('div', 'intent search', [head, box('ul', 'matches', hits)]);
  }

  var MARKS = { completed: '[x]', in_progress: '[>]', pending: '[ ]' };

  /** A plan (update_plan, ADR 0076): its steps as a list, each marked with its status; a priority other than medium after it. */
  function plan(i) {
    var steps = i.entries.map(function (e) {
      var parts = [node('span', 'mark', (MARKS[e.status] || '[?]') + ' '), node('span', 'step', e.content)];
      if (e.priority && e.priority !== 'medium') parts.push(node('span', 'note', ' (' + e.priority + ')'));
      return box('li', 'step ' + e.status, parts);
    });
    if (!steps.length) steps.push(node('li', 'note', '(no plan)'));
    return box('ol', 'intent plan', steps);
  }

  /** The tree an intent draws as; null for `generic` (and anything unknown): the row says it all. */
  function view(intent) {
    if (!intent || typeof intent !== 'object') return null;
    if (intent.kind === 'terminal') return terminal(intent);
    if (intent.kind === 'diff') return diff(intent);
    if (intent.kind === 'search') return search(intent);
    if (intent.kind === 'plan') return plan(intent);
    return null;
  }

  /** The elements of a tree, made with `doc`; texts as textContent. */
  function build(doc, tree) {
    var n = doc.createElement(tree.tag);
    if (tree.cls) n.className = tree.cls;
    if (tree.children) tree.children.forEach(function (c) { n.appendChild(build(doc, c)); });
    else n.textContent = tree.text;
    return n;
  }

  root.bridleIntents = { view: view, build: build };
})(typeof window !== 'undefined' ? window : this);
