/*
 * What a run cost, in the session viewer (ADR 0048): `bridle cost`'s report
 * shown, never computed here. Each answer's row in the timeline gets its
 * step's tokens and cost, each turn's end the turn's, and the cost panel the
 * turns, the session, each subagent and the tree. Plain browser JavaScript,
 * loaded before viewer.js (and inlined with it by `bridle replay --html`).
 */
(function () {
  'use strict';

  var money = function (v) { return v === undefined || v === null ? '?' : v === 0 ? '$0' : '$' + (v < 0.01 ? v.toFixed(6) : v.toFixed(4)); };

  /** One step's, turn's or session's figures, worded as `bridle replay --cost` words them. */
  function figure(t, usd, scripted) {
    var cache = [t.cached ? 'cached ' + t.cached : '', t.cacheWrite ? 'cache-w ' + t.cacheWrite : ''].filter(Boolean).join(', ');
    return 'in ' + t.input + (cache ? ' (' + cache + ')' : '') + ' · out ' + t.output + (t.reasoning ? ' (reasoning ' + t.reasoning + ')' : '') + ' · ' + (scripted ? 'scripted, $0' : money(usd));
  }

  function el(doc, tag, cls, text) {
    var n = doc.createElement(tag);
    if (cls) n.className = cls;
    if (text !== undefined) n.textContent = text;
    return n;
  }

  function setCost(doc, li, text) {
    var span = li.querySelector('.cost');
    if (!span) { span = el(doc, 'span', 'cost'); li.appendChild(span); }
    span.textContent = text;
    li.dataset.cost = text;
  }

  /** Labels the rows of the root session's answers and turn ends, and fills the panel; hides it for no report. */
  function render(report, doc) {
    var list = doc.getElementById('cost');
    list.textContent = '';
    var sessions = report && report.sessions ? report.sessions : [];
    doc.getElementById('cost-panel').hidden = sessions.length === 0;
    if (sessions.length === 0) return;
    var root = sessions[0].session;
    var steps = report.steps.filter(function (s) { return s.session === root; });
    var scriptedIn = function (session, turn) {
      var mine = report.steps.filter(function (s) { return s.session === session && (turn === undefined || s.turn === turn); });
      return mine.length > 0 && mine.every(function (s) { return s.scripted; });
    };
    // The session's i-th answer is its i-th step in the report, which lists them in log order.
    var answers = doc.querySelectorAll('#timeline li[data-kind="assistant/message"]');
    for (var i = 0; i < answers.length; i++) if (steps[i]) setCost(doc, answers[i], 'step: ' + figure(steps[i].tokens, steps[i].usd, steps[i].scripted));
    var ends = doc.querySelectorAll('#timeline li[data-kind="turn/end"]');
    for (var j = 0; j < ends.length; j++) {
      var turn = report.turns.filter(function (t) { return t.session === root && t.turn === ends[j].dataset.turn; })[0];
      if (turn) setCost(doc, ends[j], 'turn: ' + figure(turn.tokens, turn.usd, scriptedIn(root, turn.turn)));
    }
    var line = function (cls, label, text) {
      var li = el(doc, 'li', cls);
      li.appendChild(el(doc, 'span', 'label', label));
      li.appendChild(el(doc, 'span', 'figures', text));
      list.appendChild(li);
    };
    report.turns.filter(function (t) { return t.session === root; }).forEach(function (t) { line('turn', t.turn, figure(t.tokens, t.usd, scriptedIn(root, t.turn))); });
    sessions.forEach(function (s) { line(s.depth > 0 ? 'subagent' : 'session', s.depth > 0 ? 'subagent ' + s.session : 'session', figure(s.tokens, s.usd, scriptedIn(s.session))); });
    if (sessions.length > 1) line('tree', 'tree', figure(report.total.tokens, report.total.usd, report.steps.length > 0 && report.steps.every(function (s) { return s.scripted; })));
    var notes = ['prices as of ' + report.asOf + ', US dollars'];
    if (report.steps.some(function (s) { return s.scripted; })) notes.push('a scripted model costs nothing');
    if (report.total.unpriced && report.total.unpriced.length) notes.push('no price for ' + report.total.unpriced.join(', '));
    doc.getElementById('cost-note').textContent = notes.join(' · ');
  }

  window.bridleCost = { render: render };
})();
