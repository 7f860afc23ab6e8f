/*
 * The bridle session viewer: plain browser JavaScript, no build step, no CDN.
 *
 * Live mode (served by `bridle serve` at /): reads the token from the page
 * URL (?token=), talks JSON-RPC 2.0 over the authenticated WebSocket
 * (docs/protocol.md), attaches to a session (?session=, else the newest) and
 * shows the statecharts with the active states lit, the log as a timeline,
 * the live text, and approve/reject buttons for approval requests.
 *
 * Replay mode (`bridle replay <session> --html out.html`): the page carries
 * the log and the diagrams in a <script type="application/json"
 * id="bridle-data"> element; a slider scrubs through the log and the active
 * states are derived from the entries up to that point.
 *
 * What the run cost (ADR 0048) is `bridle cost`'s report, never computed
 * here: live, the server's `session/cost`, asked after each step's answer;
 * replayed, the report `bridle replay --html` embedded. Each answer's row
 * shows its step's tokens and cost, each turn's end the turn's, and a panel
 * the turns, the session, each subagent and the tree.
 *
 * Everything from a session is shown with textContent, never as HTML.
 */
(function () {
  'use strict';

  var MACHINES = ['session', 'turn', 'step', 'tool-call'];
  var dataEl = document.getElementById('bridle-data');
  var replay = dataEl ? JSON.parse(dataEl.textContent) : null;

  var $ = function (id) { return document.getElementById(id); };
  var el = function (tag, cls, text) {
    var n = document.createElement(tag);
    if (cls) n.className = cls;
    if (text !== undefined) n.textContent = text;
    return n;
  };
  var clip = function (s, n) { s = String(s); return s.length > n ? s.slice(0, n - 1) + '…' : s; };
  var oneLine = function (s) { return String(s).replace(/\s+/g, ' ').trim(); };

  var view = { sessionId: null, entries: [], lastSeq: 0, approvals: new Map(), liveStep: '', liveText: '', liveReasoning: '', cost: null };

  /* ---------- diagrams ---------- */

  function stripProlog(svg) {
    return String(svg || '').replace(/<\?xml[^>]*>\s*/, '').replace(/<!DOCTYPE[^>]*>\s*/i, '').replace(/<!--[\s\S]*?-->\s*/g, '');
  }

  function loadDiagrams() {
    var jobs = MACHINES.map(function (name) {
      var box = el('div', 'chart');
      box.dataset.machine = name;
      var h = el('h2', '', name);
      var where = el('span', 'where');
      h.appendChild(where);
      var holder = el('div', 'svg');
      box.appendChild(h);
      box.appendChild(holder);
      $('charts').appendChild(box);
      var svg = replay
        ? Promise.resolve(replay.diagrams && replay.diagrams[name])
        : fetch('diagrams/' + name + '.svg').then(function (r) { return r.ok ? r.text() : ''; });
      // The SVGs are bridle's own checked-in diagrams, not session data.
      return svg.then(function (text) { holder.innerHTML = stripProlog(text); });
    });
    return Promise.all(jobs);
  }

  /** The state node ids a state value makes active: { running: 'active' } → session.running, session.running.active. */
  function activeIds(machine, value) {
    var out = [];
    (function visit(prefix, v) {
      if (typeof v === 'string') out.push(prefix + '.' + v);
      else if (v && typeof v === 'object') Object.keys(v).forEach(function (k) { out.push(prefix + '.' + k); visit(prefix + '.' + k, v[k]); });
    })(machine, value);
    return out;
  }

  function valueText(v) {
    if (typeof v === 'string') return v;
    if (v && typeof v === 'object') return Object.keys(v).map(function (k) { return k + '.' + valueText(v[k]); }).join(', ');
    return String(v);
  }

  function highlight(actors) {
    var charts = document.querySelectorAll('.chart');
    for (var i = 0; i < charts.length; i++) {
      var box = charts[i];
      var machine = box.dataset.machine;
      var lit = box.querySelectorAll('.active');
      for (var j = 0; j < lit.length; j++) lit[j].classList.remove('active');
      var mine = actors.filter(function (a) { return a.machine === machine; });
      mine.forEach(function (a) {
        activeIds(machine, a.value).forEach(function (id) {
          var g = box.querySelector('[id="state:' + id + '"]');
          if (g) g.classList.add('active');
        });
      });
      box.querySelector('.where').textContent = mine.length === 0 ? '' : mine.map(function (a) { return (a.id === machine ? '' : a.id + ': ') + valueText(a.value); }).join(' · ');
      box.dataset.active = mine.map(function (a) { return valueText(a.value); }).join(' ');
    }
  }

  /* ---------- the log ---------- */

  function summarize(e) {
    switch (e.kind) {
      case 'session/start': return e.id + ' · ' + e.model + ' · ' + e.cwd;
      case 'turn/start': return e.turn + ' ← ' + clip(oneLine(e.input), 200);
      case 'user/message': return (e.origin === 'user' ? '' : '[' + e.origin + '] ') + clip(e.text, 400);
      case 'step/start': return e.step;
      case 'request/header': return e.params.model + ' · ' + e.tools.length + ' tools';
      case 'assistant/message': {
        var parts = e.blocks.map(function (b) {
          if (b.type === 'text') return b.text;
          if (b.type === 'reasoning') return '(thinking) ' + clip(oneLine(b.text), 120);
          return '→ ' + b.name + ' ' + clip(b.arguments, 160);
        });
        if (e.finish && e.finish.kind === 'error') parts.push('✗ ' + e.finish.code + ': ' + e.finish.message);
        if (e.interrupted) parts.push('(interrupted)');
        return parts.join('\n');
      }
      case 'model/retry': return 'attempt ' + e.attempt + ' · ' + e.code + ' · wait ' + e.delayMs + ' ms';
      case 'tool/call': return e.callId + ' ' + e.name + ' ' + clip(e.arguments, 200);
      case 'approval/asked': return e.callId + ' ' + e.name + ': ' + e.reason;
      case 'approval/decided': return e.callId + ' ' + e.outcome + ' by ' + e.by;
      case 'tool/dispatch': return e.callId + ' ' + e.name;
      case 'tool/result': return e.callId + ' ' + e.status + (e.code ? ' ' + e.code : '') + ': ' + clip(e.content, 300);
      case 'step/end': return e.step + ' · ' + e.reason;
      case 'turn/end': return e.turn + ' · ' + e.reason + (e.code ? ' ' + e.code : '') + ' · ' + e.steps + ' steps';
      case 'checkpoint': return 'after ' + e.turn;
      default: {
        var rest = {};
        Object.keys(e).forEach(function (k) { if (k !== 'seq' && k !== 'at' && k !== 'kind') rest[k] = e[k]; });
        return clip(JSON.stringify(rest), 300);
      }
    }
  }

  function isBad(e) {
    return (e.kind === 'tool/result' && e.status !== 'ok') || (e.kind === 'turn/end' && e.reason !== 'completed') ||
      (e.kind === 'assistant/message' && e.finish && e.finish.kind === 'error') || e.kind === 'log/not-durable';
  }

  /** A row of the timeline; a finished call's row also draws its render intent (viewer-intents.js, ADR 0067). */
  function entryRow(e, intent) {
    var li = el('li', isBad(e) ? 'bad' : '');
    li.dataset.seq = String(e.seq);
    li.dataset.kind = e.kind;
    if (typeof e.turn === 'string') li.dataset.turn = e.turn;
    li.appendChild(el('span', 'seq', String(e.seq)));
    li.appendChild(el('span', 'kind', e.kind));
    li.appendChild(el('span', 'text', summarize(e)));
    var tree = e.kind === 'tool/result' ? window.bridleIntents.view(intent) : null;
    if (tree) li.appendChild(window.bridleIntents.build(document, tree));
    li.title = e.at;
    return li;
  }

  /* ---------- what it cost (ADR 0048) ---------- */

  // Shows `bridle cost`'s report (viewer-cost.js); `null` hides the panel.
  function renderCost(report) {
    view.cost = report || null;
    window.bridleCost.render(report, document);
  }

  var costQueued = false;
  /** Asks the server for the session's cost once, soon: a burst of entries costs one request. */
  function queueCost() {
    if (costQueued || replay) return;
    costQueued = true;
    setTimeout(function () {
      costQueued = false;
      var id = view.sessionId;
      if (!id) return;
      rpc('session/cost', { sessionId: id }).then(function (r) { if (r.sessionId === view.sessionId) renderCost(r.cost); }, function () { /* a figure missing, never the viewer */ });
    }, 50);
  }

  /* ---------- lineage (ADR 0029) ---------- */

  // What the session was forked from (its header's forkOf), and the forks of it that were found.
  function renderLineage(from, forks) {
    var list = $('lineage');
    list.textContent = '';
    if (from) list.appendChild(el('li', 'from', 'forked from ' + from.session + ' at seq ' + from.seq));
    (forks || []).forEach(function (f) { list.appendChild(el('li', 'fork', 'fork ' + f.id + ' at seq ' + f.seq)); });
    $('lineage-panel').hidden = list.children.length === 0;
  }

  function addEntry(e, intent) {
    if (e.seq <= view.lastSeq) return; // at most once, in order
    if (e.kind === 'session/start' && e.forkOf) renderLineage(e.forkOf, []);
    view.lastSeq = e.seq;
    view.entries.push(e);
    var list = $('timeline');
    var atBottom = list.scrollTop + list.clientHeight >= list.scrollHeight - 4;
    list.appendChild(entryRow(e, intent));
    if (atBottom) list.scrollTop = list.scrollHeight;
    $('log-count').textContent = view.entries.length + ' entries';
    if (e.kind === 'assistant/message' || e.kind === 'subagent/end' || e.kind === 'turn/end') queueCost();
    if (e.kind === 'approval/decided' || (e.kind === 'tool/result' && view.approvals.has(e.callId))) dropApproval(e.callId);
  }

  /* ---------- live text ---------- */

  function showLive() {
    var pre = $('live');
    pre.textContent = '';
    if (view.liveReasoning) pre.appendChild(el('span', 'reasoning', view.liveReasoning + '\n'));
    pre.appendChild(document.createTextNode(view.liveText));
    pre.scrollTop = pre.scrollHeight;
    $('live-step').textContent = view.liveStep;
  }

  function onDelta(p) {
    if (p.step !== view.liveStep) { view.liveStep = p.step; view.liveText = ''; view.liveReasoning = ''; }
    if (p.chunk.type === 'text-delta') view.liveText += p.chunk.text;
    else if (p.chunk.type === 'reasoning-delta') view.liveReasoning += p.chunk.text;
    else return;
    showLive();
  }

  /* ---------- approvals ---------- */

  /**
   * What is being approved, whole: a tool's presenter may shorten it (bash
   * shows a command's first line only), and the person deciding must see all of it.
   */
  function subject(req) {
    var a = req.args;
    if (a && typeof a === 'object') {
      if (typeof a.command === 'string') return a.command;
      if (typeof a.path === 'string') return a.path;
      return JSON.stringify(a, null, 2);
    }
    return a === undefined ? '' : String(a);
  }

  /**
   * An edit or a write as the diff the server (or the replay page) computed
   * with bridle's one diff function (tools/diff.ts): the path, then every
   * line, removed, added or kept, so the card shows what will be written.
   */
  function changeView(change) {
    var pre = el('pre', 'what diff');
    pre.appendChild(el('span', 'path', change.path + '\n'));
    if (!change.lines.length) pre.appendChild(el('span', 'note', change.tool === 'write_file' ? '(empty file)' : '(no lines)'));
    change.lines.forEach(function (l, i) {
      var line = el('span', l.op === '+' ? 'add' : l.op === '-' ? 'del' : 'same', l.op + ' ' + l.text + (i < change.lines.length - 1 ? '\n' : ''));
      pre.appendChild(line);
    });
    return pre;
  }

  function parseArgs(text) {
    try { return JSON.parse(text); } catch (e) { return text; }
  }

  function renderApprovals() {
    var box = $('approvals');
    box.textContent = '';
    if (view.approvals.size === 0) { box.appendChild(el('p', 'empty', 'nothing waiting')); return; }
    view.approvals.forEach(function (req, callId) {
      var card = el('div', 'approval');
      card.dataset.callId = callId;
      card.appendChild(el('div', 'summary', req.presented || req.tool));
      card.appendChild(req.change ? changeView(req.change) : el('pre', 'what', subject(req)));
      card.appendChild(el('div', 'why', callId + ' · ' + req.reason));
      var row = el('div', 'row');
      [['approve', 'allowed-once', 'approve once'], ['reject', 'rejected', 'reject']].forEach(function (b) {
        var btn = el('button', '', b[2]);
        btn.type = 'button';
        btn.dataset.action = b[0];
        btn.disabled = !!replay;
        btn.addEventListener('click', function () {
          row.querySelectorAll('button').forEach(function (x) { x.disabled = true; });
          rpc('approval/respond', { sessionId: view.sessionId, callId: callId, outcome: b[1] }).then(
            function () { dropApproval(callId); },
            function (err) { card.appendChild(el('div', 'why', 'not accepted: ' + err.message)); },
          );
        });
        row.appendChild(btn);
      });
      card.appendChild(row);
      box.appendChild(card);
    });
  }

  function dropApproval(callId) {
    if (view.approvals.delete(callId)) renderApprovals();
  }

  /* ---------- state from the log alone (replay) ---------- */

  /** The machines' states as far as the log shows them: what a replayed page can light up. */
  function deriveActors(entries) {
    var turn = null, step = null, calls = new Map(), sessionValue = 'idle';
    entries.forEach(function (e) {
      switch (e.kind) {
        case 'turn/start': turn = { id: 'turn', machine: 'turn', value: 'preStep' }; step = null; calls = new Map(); sessionValue = { running: 'active' }; break;
        case 'user/message': if (turn && e.origin === 'user') turn.value = 'stepping'; break;
        case 'compaction/start': if (turn) turn.value = 'compacting'; else sessionValue = 'compacting'; break;
        case 'compaction/end': if (turn) turn.value = 'stepping'; else sessionValue = 'idle'; break;
        case 'step/start': if (turn) turn.value = 'stepping'; step = { id: 'step', machine: 'step', value: 'preparing' }; calls = new Map(); break;
        case 'request/header': if (step) step.value = 'preparing'; break;
        case 'model/retry': if (step) step.value = 'retrying'; break;
        case 'assistant/message':
          if (step) step.value = e.blocks.some(function (b) { return b.type === 'tool-call'; }) ? 'calling' : (e.interrupted ? 'interrupted' : e.finish.kind === 'error' ? 'failing' : 'answered');
          break;
        case 'tool/call': calls.set(e.callId, { id: e.callId, machine: 'tool-call', value: 'validating' }); if (step) step.value = 'calling'; break;
        case 'approval/asked': if (calls.has(e.callId)) calls.get(e.callId).value = 'asking'; break;
        case 'approval/decided': if (calls.has(e.callId)) calls.get(e.callId).value = /^allowed/.test(e.outcome) ? 'ready' : 'denied'; break;
        case 'tool/dispatch': if (calls.has(e.callId)) calls.get(e.callId).value = 'executing'; break;
        case 'tool/result': calls.delete(e.callId); break;
        case 'step/end': step = null; if (turn) turn.value = 'deciding'; break;
        case 'turn/end': turn = null; step = null; calls = new Map(); sessionValue = 'idle'; break;
      }
    });
    var out = [{ id: 'session', machine: 'session', value: sessionValue }];
    if (turn) out.push(turn);
    if (step) out.push(step);
    calls.forEach(function (c) { out.push(c); });
    return out;
  }

  /* ---------- live mode: JSON-RPC over WebSocket ---------- */

  var ws = null, nextId = 1, pending = new Map();

  function setStatus(state, text) {
    var s = $('status');
    s.dataset.state = state;
    s.textContent = text;
  }

  function rpc(method, params) {
    return new Promise(function (resolve, reject) {
      if (!ws || ws.readyState !== 1) return reject(new Error('not connected'));
      var id = nextId++;
      pending.set(id, { resolve: resolve, reject: reject });
      ws.send(JSON.stringify({ jsonrpc: '2.0', id: id, method: method, params: params }));
    });
  }

  function onMessage(m) {
    if (m.id !== undefined && m.id !== null && pending.has(m.id)) {
      var p = pending.get(m.id);
      pending.delete(m.id);
      if (m.error) p.reject(new Error(m.error.message)); else p.resolve(m.result);
      return;
    }
    var params = m.params || {};
    if (params.sessionId !== view.sessionId) return;
    if (m.method === 'session/entry') addEntry(params.entry, params.intent);
    else if (m.method === 'session/delta') onDelta(params);
    else if (m.method === 'session/state') highlight(params.actors || []);
    else if (m.method === 'approval/request') { view.approvals.set(params.callId, params); renderApprovals(); }
  }

  function attach(sessionId) {
    view.sessionId = sessionId;
    view.entries = []; view.lastSeq = 0; view.approvals = new Map();
    view.liveStep = ''; view.liveText = ''; view.liveReasoning = '';
    $('timeline').textContent = '';
    renderCost(null);
    renderLineage(null, []);
    renderApprovals(); showLive();
    var url = new URL(location.href);
    url.searchParams.set('session', sessionId);
    history.replaceState(null, '', url.toString());
    return rpc('session/attach', { sessionId: sessionId }).then(function () {
      setStatus('attached', 'attached to ' + sessionId);
      return rpc('session/snapshot', { sessionId: sessionId });
    }).then(function (snap) { highlight(snap.actors); queueCost(); });
  }

  function fillSessions(sessions, selected) {
    var sel = $('session-select');
    sel.textContent = '';
    sessions.forEach(function (s) {
      var o = el('option', '', s.sessionId + ' · ' + s.model);
      o.value = s.sessionId;
      o.selected = s.sessionId === selected;
      sel.appendChild(o);
    });
  }

  function refreshList(selected) {
    return rpc('session/list', {}).then(function (r) { fillSessions(r.sessions, selected); return r.sessions; });
  }

  function startLive() {
    var q = new URLSearchParams(location.search);
    var token = q.get('token') || '';
    var wanted = q.get('session');
    ws = new WebSocket((location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/?token=' + encodeURIComponent(token));
    ws.onopen = function () {
      setStatus('connected', 'connected');
      refreshList(wanted).then(function (sessions) {
        var id = wanted || (sessions.length ? sessions[sessions.length - 1].sessionId : null);
        if (id) return attach(id).then(function () { return refreshList(id); });
        setStatus('connected', 'no session yet: start one');
      }).catch(function (err) { setStatus('error', err.message); });
    };
    ws.onmessage = function (ev) {
      var m = JSON.parse(ev.data);
      (Array.isArray(m) ? m : [m]).forEach(onMessage);
    };
    ws.onclose = function (ev) { setStatus('closed', 'disconnected' + (ev.reason ? ': ' + ev.reason : token ? '' : ' (no ?token= in the page URL)')); };
    $('session-select').addEventListener('change', function (ev) { attach(ev.target.value); });
    $('new-session').addEventListener('click', function () {
      rpc('session/create', {}).then(function (r) { return attach(r.sessionId).then(function () { return refreshList(r.sessionId); }); })
        .catch(function (err) { setStatus('error', err.message); });
    });
    $('input-form').addEventListener('submit', function (ev) {
      ev.preventDefault();
      var text = $('input-text').value;
      if (!text.trim() || !view.sessionId) return;
      rpc('session/input', { sessionId: view.sessionId, text: text, mode: $('input-mode').value }).then(function () { $('input-text').value = ''; });
    });
    $('cancel').addEventListener('click', function () { if (view.sessionId) rpc('session/cancel', { sessionId: view.sessionId }); });
  }

  /* ---------- replay mode ---------- */

  function startReplay() {
    var entries = replay.entries || [];
    $('controls').hidden = true;
    $('input-form').hidden = true;
    $('scrubber').hidden = false;
    var intents = replay.intents || {};
    entries.forEach(function (e) { $('timeline').appendChild(entryRow(e, e.kind === 'tool/result' ? intents[e.callId] : undefined)); });
    renderCost(replay.cost);
    var lineage = replay.lineage || {};
    renderLineage(lineage.forkedFrom, lineage.forks);
    $('log-count').textContent = entries.length + ' entries';
    var slider = $('slider');
    slider.max = String(entries.length);
    slider.value = String(entries.length);
    var show = function () {
      var n = Number(slider.value);
      var upTo = entries.slice(0, n);
      var rows = $('timeline').children;
      for (var i = 0; i < rows.length; i++) rows[i].classList.toggle('future', i >= n);
      var last = upTo[upTo.length - 1];
      $('slider-label').textContent = n === 0 ? 'before the first entry' : '#' + last.seq + ' ' + last.kind + ' · ' + last.at;
      highlight(deriveActors(upTo));
      view.approvals = new Map();
      var calls = new Map();
      upTo.forEach(function (e) {
        if (e.kind === 'tool/call') calls.set(e.callId, e.arguments);
        if (e.kind === 'approval/asked') view.approvals.set(e.callId, { callId: e.callId, tool: e.name, args: parseArgs(calls.get(e.callId)), reason: e.reason, presented: e.name, change: (replay.changes || {})[e.callId] });
        if (e.kind === 'approval/decided' || e.kind === 'tool/result') view.approvals.delete(e.callId);
      });
      renderApprovals();
      var answer = upTo.filter(function (e) { return e.kind === 'assistant/message'; }).pop();
      view.liveStep = answer ? answer.step : '';
      view.liveText = answer ? answer.blocks.filter(function (b) { return b.type === 'text'; }).map(function (b) { return b.text; }).join('') : '';
      view.liveReasoning = answer ? answer.blocks.filter(function (b) { return b.type === 'reasoning'; }).map(function (b) { return b.text; }).join('') : '';
      showLive();
      if (rows[n - 1]) rows[n - 1].scrollIntoView({ block: 'nearest' });
    };
    slider.addEventListener('input', show);
    show();
    $('live-panel').querySelector('h2').firstChild.textContent = 'answer ';
    document.title = 'bridle · replay · ' + (replay.sessionId || '');
    setStatus('attached', 'replay');
  }

  loadDiagrams().then(function () { if (replay) startReplay(); else startLive(); });
  window.bridleViewer = { view: view, deriveActors: deriveActors, activeIds: activeIds, renderCost: renderCost };
})();
