// kbench site: sorting and filtering of tables, run page tabs, source highlighting, and the
// transcript timeline, loaded in pieces (events-<k>.js) as the reader scrolls. Works from file://:
// data files are scripts that call kbRun() and kbChunk(), never fetch(). Text from runs is only
// ever inserted as text (textContent), never as markup.
(function () {
  'use strict';

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  // ---- tables: sort by any column, filter rows by harness and model family, columns by level
  function sortValue(cell) {
    if (!cell) return '';
    var v = cell.getAttribute('data-sort');
    if (v !== null && v !== '' && !isNaN(Number(v))) return Number(v);
    return (v === null ? cell.textContent : v).trim().toLowerCase();
  }
  function initSorting() {
    document.querySelectorAll('table.sortable').forEach(function (table) {
      table.querySelectorAll('button.sort').forEach(function (btn) {
        btn.addEventListener('click', function () {
          var col = +btn.getAttribute('data-col');
          var th = btn.parentNode;
          var asc = th.getAttribute('aria-sort') !== 'ascending';
          table.querySelectorAll('th[aria-sort]').forEach(function (h) { h.removeAttribute('aria-sort'); });
          th.setAttribute('aria-sort', asc ? 'ascending' : 'descending');
          var body = table.tBodies[0];
          var rows = Array.prototype.slice.call(body.rows);
          rows.sort(function (a, b) {
            var x = sortValue(a.cells[col]), y = sortValue(b.cells[col]);
            if (typeof x !== typeof y) { x = String(x); y = String(y); }
            var r = x < y ? -1 : x > y ? 1 : 0;
            return asc ? r : -r;
          });
          rows.forEach(function (r) { body.appendChild(r); });
        });
      });
    });
  }
  function initFilters() {
    var selects = document.querySelectorAll('select[data-filter]');
    if (!selects.length) return;
    function apply() {
      var want = {};
      selects.forEach(function (s) { want[s.id] = s.value; });
      document.querySelectorAll('table.sortable tbody tr').forEach(function (tr) {
        var ok = (!want['filter-agent'] || tr.getAttribute('data-agent') === want['filter-agent']) &&
                 (!want['filter-family'] || tr.getAttribute('data-family') === want['filter-family']);
        tr.hidden = !ok;
      });
      document.querySelectorAll('table.board [data-level]').forEach(function (c) {
        c.hidden = !!want['filter-level'] && c.getAttribute('data-level') !== want['filter-level'];
      });
    }
    selects.forEach(function (s) { s.addEventListener('change', apply); });
  }

  // ---- tabs, and links into a tab (quotes of the annotation, line anchors)
  function showTab(name) {
    var tab = document.getElementById('tab-' + name);
    if (!tab) return;
    document.querySelectorAll('[role=tab]').forEach(function (t) {
      var on = t === tab;
      t.setAttribute('aria-selected', on ? 'true' : 'false');
      var panel = document.getElementById(t.getAttribute('aria-controls'));
      if (panel) panel.hidden = !on;
    });
  }
  function reveal(id, last) {
    var target = document.getElementById(id);
    if (!target) {
      var m = /^ev-(\d+)$/.exec(id);
      if (m) { showTab('timeline'); loadItem(+m[1], function () { reveal(id); }); }
      return;
    }
    var panel = target.closest('[role=tabpanel]');
    if (panel && panel.hidden) showTab(panel.id.replace(/^panel-/, ''));
    var d = target.closest('details');
    if (d) d.open = true;
    document.querySelectorAll('.hl').forEach(function (x) { x.classList.remove('hl'); });
    target.classList.add('hl');
    var lm = /^(.*-L)(\d+)$/.exec(id);
    if (lm && last) {
      for (var k = +lm[2] + 1; k <= last; k++) {
        var line = document.getElementById(lm[1] + k);
        if (line) line.classList.add('hl');
      }
    }
    target.scrollIntoView({ block: 'center' });
  }
  function initTabs() {
    document.querySelectorAll('[role=tab]').forEach(function (t) {
      t.addEventListener('click', function () { showTab(t.id.replace(/^tab-/, '')); });
    });
    document.addEventListener('click', function (ev) {
      var a = ev.target.closest && ev.target.closest('a[href^="#"]');
      if (!a) return;
      var id = a.getAttribute('href').slice(1);
      if (!id) return;
      ev.preventDefault();
      history.replaceState(null, '', '#' + id);
      reveal(id, +a.getAttribute('data-last') || 0);
    });
    if (location.hash.length > 1) reveal(decodeURIComponent(location.hash.slice(1)));
  }

  // ---- source highlighting: highlight.js over the whole file, then split back into the lines
  // (each line keeps its anchor); highlight.js escapes the text it returns.
  function splitHighlighted(html) {
    var out = [], open = [], cur = '';
    var re = /(<span[^>]*>)|(<\/span>)|(\n)|([^<\n]+|<)/g, m;
    while ((m = re.exec(html)) !== null) {
      if (m[1]) { open.push(m[1]); cur += m[1]; }
      else if (m[2]) { open.pop(); cur += m[2]; }
      else if (m[3]) { out.push(cur + open.map(function () { return '</span>'; }).join('')); cur = open.join(''); }
      else cur += m[4];
    }
    out.push(cur);
    return out;
  }
  function initHighlight() {
    if (!window.hljs) return;
    document.querySelectorAll('.source').forEach(function (src) {
      var parts = src.querySelectorAll('.lc');
      var code = Array.prototype.map.call(parts, function (p) { return p.textContent; }).join('\n');
      var lang = src.getAttribute('data-language') || 'plaintext';
      if (!window.hljs.getLanguage(lang)) return;
      var lines = splitHighlighted(window.hljs.highlight(code, { language: lang, ignoreIllegals: true }).value);
      if (lines.length !== parts.length) return;
      parts.forEach(function (p, i) { p.innerHTML = lines[i]; });
      src.classList.add('hljs', 'highlighted');
    });
  }

  // ---- the timeline
  var run = null, loaded = {}, pending = {}, observer = null;
  var SHOW_CHARS = 4000;

  function sizeText(n) { return n >= 1048576 ? (n / 1048576).toFixed(1) + ' MB' : n >= 1024 ? (n / 1024).toFixed(1) + ' KB' : n + ' B'; }
  function timeText(t) { return typeof t === 'number' ? (t >= 60 ? Math.floor(t / 60) + ' min ' + Math.round(t % 60) + ' s' : t.toFixed(1) + ' s') : ''; }

  // Long text: the first SHOW_CHARS characters, and a button for the rest.
  function textBlock(text, cls) {
    var box = el('div', 'text ' + (cls || ''));
    if (cls) box.tabIndex = 0;  // a scrollable result: reachable by keyboard
    text = String(text || '');
    if (text.length <= SHOW_CHARS) { box.textContent = text; return box; }
    box.textContent = text.slice(0, SHOW_CHARS);
    var more = el('button', 'more', 'Show all ' + text.length + ' characters');
    more.type = 'button';
    more.addEventListener('click', function () { box.textContent = text; });
    var wrap = el('div');
    wrap.appendChild(box);
    wrap.appendChild(more);
    return wrap;
  }
  // A collapsed block whose body is made only when first opened.
  function lazyDetails(summary, make, open, cls) {
    var d = el('details', cls);
    var s = el('summary');
    if (typeof summary === 'string') s.textContent = summary; else s.appendChild(summary);
    d.appendChild(s);
    var made = false;
    function fill() { if (!made) { made = true; d.appendChild(make()); } }
    d.addEventListener('toggle', function () { if (d.open) fill(); });
    if (open) { d.open = true; fill(); }
    return d;
  }
  function marks(item, head) {
    (item.marks || []).forEach(function (m) {
      var label = m === 'control' ? 'control characters shown as symbols' : m === 'invalid_utf8' ? 'invalid UTF-8 replaced' : m;
      head.appendChild(el('span', 'mark', label));
    });
  }
  function diffBlock(ch) {
    var box = el('div', 'diff');
    var h = el('div', 'diff-head');
    h.textContent = (ch.kind === 'delete' ? 'deleted ' : ch.new_file ? 'new file ' : ch.kind + ' ') + ch.path + '  +' + ch.diff.added + ' −' + ch.diff.removed +
      (ch.partial ? '  (earlier content not in the transcript: the replaced text is shown)' : '');
    box.appendChild(h);
    var pre = el('pre', 'diff-body');
    pre.tabIndex = 0;  // scrollable: reachable by keyboard
    (ch.diff.hunks || []).forEach(function (hk) {
      pre.appendChild(el('span', 'hunk', hk.header !== undefined ? (hk.header || '@@') + '\n'
        : '@@ -' + hk.old_start + ',' + hk.old_lines + ' +' + hk.new_start + ',' + hk.new_lines + ' @@\n'));
      hk.lines.forEach(function (l) {
        var c = l.charAt(0);
        pre.appendChild(el('span', c === '+' ? 'add' : c === '-' ? 'del' : 'ctx', l + '\n'));
      });
    });
    box.appendChild(pre);
    return box;
  }
  function argPreview(input) {
    if (input === null || input === undefined) return '';
    var s = typeof input === 'string' ? input : (input.command || input.cmd || input.file_path || input.filePath || input.path || input.pattern || JSON.stringify(input));
    s = String(s).replace(/\s+/g, ' ');
    return s.length > 120 ? s.slice(0, 119) + '…' : s;
  }
  function renderItem(item) {
    var a = el('article', 'ev ev-' + item.kind);
    a.id = 'ev-' + item.i;
    var head = el('div', 'ev-head');
    var role = { user: 'user', assistant: 'assistant', reasoning: 'reasoning', tool: 'tool call', subagent: 'subagent',
                 tool_result: 'tool result', usage: 'tokens', error: 'error', unknown: 'unknown event', unreadable: 'unreadable line' }[item.kind] || item.kind;
    head.appendChild(el('span', 'role', role));
    if (item.tool) head.appendChild(el('span', 'tool', item.tool));
    if (item.t !== undefined) head.appendChild(el('span', 'time', timeText(item.t)));
    if (item.kbench) head.appendChild(el('span', 'kb kb-' + (item.kbench_outcome || 'none'), 'kbench ' + item.kbench + (item.kbench_outcome ? ': ' + item.kbench_outcome : '')));
    marks(item, head);
    a.appendChild(head);
    if (item.note) a.appendChild(el('p', 'note', item.note));
    if (item.kind === 'usage') {
      var u = item.usage || {}, parts = [];
      [['input_tokens', 'in'], ['output_tokens', 'out'], ['cache_read_tokens', 'cache read'], ['cache_write_tokens', 'cache write'],
       ['reasoning_tokens', 'reasoning'], ['cost_usd', '$']].forEach(function (k) {
        if (u[k[0]] !== undefined) parts.push(k[1] + ' ' + u[k[0]]);
      });
      head.appendChild(el('span', 'badge', (item.scope === 'total' ? 'run total: ' : 'turn: ') + (parts.join(' · ') || 'no counts')));
      return a;
    }
    if (item.kind === 'reasoning') {
      a.appendChild(lazyDetails('reasoning (' + String(item.text || '').length + ' characters)', function () { return textBlock(item.text); }, false));
      return a;
    }
    if (item.kind === 'tool' || item.kind === 'subagent' || item.kind === 'tool_result') {
      (item.changes || []).forEach(function (ch) { a.appendChild(diffBlock(ch)); });
      var res = item.result;
      var sum = el('span');
      sum.textContent = (item.kind === 'subagent' ? 'subagent session · ' : '') + argPreview(item.input) +
        (res ? '  →  ' + (res.is_error ? 'error, ' : '') + sizeText(String(res.text || '').length) : item.kind === 'tool_result' ? '' : '  (no result)');
      a.appendChild(lazyDetails(sum, function () {
        var body = el('div', 'call-body');
        if (item.input !== undefined && item.input !== null) {
          body.appendChild(el('h4', null, 'arguments'));
          var args = el('pre', 'args');
          args.tabIndex = 0;
          args.textContent = typeof item.input === 'string' ? item.input : JSON.stringify(item.input, null, 2);
          body.appendChild(args);
        }
        if (res) {
          body.appendChild(el('h4', null, res.is_error ? 'result (error)' : 'result'));
          body.appendChild(textBlock(res.text, 'result' + (res.is_error ? ' error' : '')));
        }
        return body;
      }, false, 'call'));
      return a;
    }
    // The prompt and other long user messages start collapsed: the agent's work is what is read.
    if (item.kind === 'user' && String(item.text || '').length > 800) {
      a.appendChild(lazyDetails('message (' + String(item.text).length + ' characters)', function () { return textBlock(item.text); }, false));
      return a;
    }
    a.appendChild(textBlock(item.text));
    return a;
  }
  function chunkBox(k) { return document.querySelector('.chunk[data-k="' + k + '"]'); }
  function loadChunk(k, then) {
    if (loaded[k]) { if (then) then(); return; }
    (pending[k] = pending[k] || []).push(then);
    if (pending[k].length > 1) return;
    var s = document.createElement('script');
    s.src = run.timeline.chunks[k].file;
    s.onerror = function () { var b = chunkBox(k); if (b) b.textContent = 'This part of the timeline could not be loaded (' + run.timeline.chunks[k].file + ').'; };
    document.body.appendChild(s);
  }
  function loadItem(i, then) {
    if (!run) return;
    run.timeline.chunks.forEach(function (c, k) { if (i >= c.first && i < c.first + c.count) loadChunk(k, then); });
  }
  window.kbChunk = function (k, items) {
    var box = chunkBox(k);
    if (!box || loaded[k]) return;
    loaded[k] = true;
    if (observer) observer.unobserve(box);
    var frag = document.createDocumentFragment();
    items.forEach(function (it) { frag.appendChild(renderItem(it)); });
    box.textContent = '';
    box.style.minHeight = '';
    box.appendChild(frag);
    box.classList.add('loaded');
    (pending[k] || []).forEach(function (f) { if (f) f(); });
    pending[k] = [];
    if (window.kbTimelineReady) window.kbTimelineReady(k);
  };
  window.kbRun = function (data) {
    run = data;
    var tl = document.getElementById('timeline');
    if (!tl) return;
    var chunks = data.timeline.chunks || [];
    if (!chunks.length) tl.appendChild(el('p', null, data.timeline.error || 'The transcript has no events.'));
    chunks.forEach(function (c, k) {
      var box = el('div', 'chunk', 'Events ' + (c.first + 1) + '–' + (c.first + c.count) + ' (' + sizeText(c.bytes) + '), loaded when scrolled to.');
      box.setAttribute('data-k', k);
      box.style.minHeight = Math.min(c.count * 48, 20000) + 'px';
      tl.appendChild(box);
    });
    if ('IntersectionObserver' in window) {
      observer = new IntersectionObserver(function (entries) {
        entries.forEach(function (e) { if (e.isIntersecting) loadChunk(+e.target.getAttribute('data-k')); });
      }, { rootMargin: '1200px 0px' });
      document.querySelectorAll('.chunk').forEach(function (b) { observer.observe(b); });
    }
    if (chunks.length) loadChunk(0);
    var all = document.getElementById('expand-all');
    if (all) all.addEventListener('click', function () {
      document.querySelectorAll('#timeline details.call').forEach(function (d) { d.open = true; });
    });
  };

  function init() {
    initSorting();
    initFilters();
    initTabs();
    initHighlight();
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', init); else init();
})();
