/* srvscope report: draws the page from the JSON documents above it. Everything that comes
 * from a trace (thread names, symbols, paths) is shown as text (textContent, canvas
 * fillText), never parsed as HTML. The state after drawing is left on <body> as data-*
 * attributes (frames drawn, frames highlighted, rows shown, errors), for tests and for
 * anyone who wants to script the page. URL hash: #trace=N&flame=off|wake|on&search=TEXT
 * &filter=TEXT&sort=COLUMN. */
'use strict';

var errors = [];
window.addEventListener('error', function (e) {
	errors.push(String(e.message));
	document.body.dataset.errors = String(errors.length);
});

function readJSON(id) {
	var e = document.getElementById(id);
	return e ? JSON.parse(e.textContent) : null;
}

var DATA = readJSON('srvscope-data');
var MODEL = readJSON('srvscope-model');
var CRITICAL = readJSON('srvscope-critical');

/* el('td', {class: 'n'}, 'text', child...): strings become text nodes. */
function el(tag, attrs) {
	var e = document.createElement(tag), k, i, c;
	for (k in attrs || {}) {
		if (k === 'class')
			e.className = attrs[k];
		else if (k === 'text')
			e.textContent = attrs[k];
		else
			e.setAttribute(k, attrs[k]);
	}
	for (i = 2; i < arguments.length; i++) {
		c = arguments[i];
		if (c === null || c === undefined)
			continue;
		e.appendChild(typeof c === 'object' ? c : document.createTextNode(String(c)));
	}
	return e;
}

function ms(ns) {
	var v = ns / 1e6;
	return v >= 100 ? v.toFixed(0) : v >= 1 ? v.toFixed(2) : v.toFixed(3);
}

function dur(ns) {
	if (ns >= 1e9)
		return (ns / 1e9).toFixed(ns >= 1e10 ? 1 : 3) + ' s';
	if (ns >= 1e6)
		return (ns / 1e6).toFixed(ns >= 1e7 ? 1 : 2) + ' ms';
	if (ns >= 1e3)
		return (ns / 1e3).toFixed(1) + ' us';
	return ns + ' ns';
}

function num(n) {
	return Number(n).toLocaleString('en-US');
}

function pct(part, whole) {
	return whole ? (100 * part / whole).toFixed(part * 1000 < whole ? 2 : 1) + '%' : '-';
}

function hashParams() {
	var p = {}, h = location.hash.replace(/^#/, '');
	h.split('&').forEach(function (kv) {
		var i = kv.indexOf('=');
		if (i > 0)
			p[decodeURIComponent(kv.slice(0, i))] = decodeURIComponent(kv.slice(i + 1));
	});
	return p;
}

var PARAMS = hashParams();
var state = {}; /* of the trace shown */

function section(id, title) {
	var s = el('section', {id: id}, el('h2', {text: title}));
	document.getElementById('main').appendChild(s);
	return s;
}

function card(v, k) {
	return el('div', {class: 'card'}, el('div', {class: 'v', text: v}), el('div', {class: 'k', text: k}));
}

/* ---- summary ---- */

function renderSummary(T) {
	var s = section('summary', 'Summary'), cpu = 0, blocked = 0, facts, when;
	T.threads.forEach(function (t) {
		cpu += t.runtime_ns;
		blocked += t.blocked_ns;
	});
	s.appendChild(el('div', {class: 'cards'},
		card(dur(T.duration_ns), 'recorded'),
		card(num(T.threads_total), 'threads'),
		card(dur(cpu), 'CPU time'),
		card(dur(blocked), 'blocked time'),
		card(num(T.episodes), 'blocking episodes'),
		card(num(T.events), 'events'),
		card(num(T.lost_events + T.lost_stacks), 'events + stacks lost')));
	when = new Date(T.start_realtime_ns / 1e6);
	facts = el('dl', {class: 'facts'});
	[['file', T.file], ['host', T.host], ['kernel', T.kernel + ' (' + T.machine + ', ' + T.nr_cpus + ' CPUs)'],
	 ['started', isNaN(when) ? '?' : when.toISOString()],
	 ['recorded', [T.system_wide ? 'every process' : 'the targets', T.stacks ? 'stacks' : 'no stacks',
		T.syscalls ? 'syscalls' : null, T.on_cpu ? 'on-CPU samples' : null].filter(Boolean).join(', ')],
	 ['lost', T.lost], ['command', T.info]].forEach(function (f) {
		if (f[1] === null || f[1] === undefined || f[1] === '')
			return;
		facts.appendChild(el('dt', {text: f[0]}));
		facts.appendChild(el('dd', {text: String(f[1]).trim()}));
	});
	s.appendChild(facts);
	if (T.truncated)
		s.appendChild(el('div', {class: 'warn', text: 'The file ends in the middle of a section (the recording was killed?): this is what precedes it.'}));
	else if (!T.ended)
		s.appendChild(el('div', {class: 'warn', text: 'The file has no end section (the recording was killed?).'}));
	T.damage.forEach(function (d) {
		s.appendChild(el('div', {class: 'warn', text: d}));
	});
	if (T.threads.length < T.threads_total)
		s.appendChild(el('p', {class: 'note', text: 'The table and the timeline show the ' + T.threads.length +
			' busiest threads of ' + T.threads_total + ' (CPU time + blocked time; srvscope report --max-threads).'}));

	var row = el('div', {class: 'row'});
	var sys = el('table', null, el('thead', null, el('tr', null, el('th', {text: 'blocked in'}),
		el('th', {class: 'n', text: 'episodes'}), el('th', {class: 'n', text: 'total'}), el('th', {class: 'n', text: 'share'}),
		el('th', {class: 'n', text: 'longest'}))));
	var tb = el('tbody'), wk, wtb, wsum = 0;
	T.syscalls.slice(0, 12).forEach(function (g) {
		tb.appendChild(el('tr', null, el('td', {text: g.syscall === null ? '(not in a syscall)' : g.syscall}),
			el('td', {class: 'n', text: num(g.count)}), el('td', {class: 'n', text: dur(g.sum_ns)}),
			el('td', {class: 'n', text: pct(g.sum_ns, blocked)}), el('td', {class: 'n', text: dur(g.max_ns)})));
	});
	sys.appendChild(tb);
	T.wakeups.forEach(function (w) { wsum += w.sum_ns; });
	wk = el('table', null, el('thead', null, el('tr', null, el('th', {text: 'woken by'}),
		el('th', {class: 'n', text: 'episodes'}), el('th', {class: 'n', text: 'blocked time'}), el('th', {class: 'n', text: 'share'}))));
	wtb = el('tbody');
	T.wakeups.slice().sort(function (a, b) { return b.sum_ns - a.sum_ns; }).forEach(function (w) {
		wtb.appendChild(el('tr', null, el('td', {text: w.kind}), el('td', {class: 'n', text: num(w.count)}),
			el('td', {class: 'n', text: dur(w.sum_ns)}), el('td', {class: 'n', text: pct(w.sum_ns, wsum)})));
	});
	wk.appendChild(wtb);
	row.appendChild(el('div', null, el('h3', {text: 'Blocked time by syscall'}), sys));
	row.appendChild(el('div', null, el('h3', {text: 'Blocked time by what ended it'}), wk));
	s.appendChild(row);
}

/* ---- threads table ---- */

var COLUMNS = [
	{key: 'comm', title: 'thread', text: true},
	{key: 'tid', title: 'tid'},
	{key: 'pid', title: 'pid'},
	{key: 'title', title: 'process', text: true},
	{key: 'runtime_ns', title: 'CPU', f: dur},
	{key: 'switches', title: 'switches', f: num},
	{key: 'avg_delay_ns', title: 'avg delay', f: dur},
	{key: 'max_delay_ns', title: 'max delay', f: dur},
	{key: 'episodes', title: 'blocked', f: num, tip: 'blocking episodes'},
	{key: 'blocked_ns', title: 'blocked time', f: dur},
	{key: 'max_blocked_ns', title: 'longest', f: dur},
	{key: 'top_syscall', title: 'mostly in', text: true},
	{key: 'top_wake', title: 'mostly woken by', text: true},
];

function prepareThreads(T) {
	T.threads.forEach(function (t) {
		var best = null, k;
		t.top_syscall = t.syscalls.length ? (t.syscalls[0].syscall || '-') + ' (' + pct(t.syscalls[0].sum_ns, t.blocked_ns) + ')' : '';
		for (k in t.wakeups_ns)
			if (!best || t.wakeups_ns[k] > t.wakeups_ns[best])
				best = k;
		t.top_wake = best ? best + ' (' + pct(t.wakeups_ns[best], t.blocked_ns) + ')' : '';
		t.search = [t.comm, t.title || '', t.tid, t.pid, t.top_syscall, t.top_wake].join(' ').toLowerCase();
	});
}

function filteredThreads() {
	var T = state.T, f = state.filter.toLowerCase(), col = state.sort, list;
	list = T.threads.filter(function (t) { return !f || t.search.indexOf(f) >= 0; });
	list.sort(function (a, b) {
		var x = a[col.key], y = b[col.key], c;
		if (x === null || x === undefined) x = '';
		if (y === null || y === undefined) y = '';
		c = typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y));
		return state.sortDesc ? -c : c;
	});
	return list;
}

function renderTableBody() {
	var list = filteredThreads(), tb = state.tbody;
	tb.textContent = '';
	list.forEach(function (t) {
		var tr = el('tr');
		COLUMNS.forEach(function (c) {
			var v = t[c.key];
			tr.appendChild(el('td', {class: c.text ? 'name' : 'n', title: c.text ? String(v || '') : ''},
				v === null || v === undefined ? '' : c.f ? c.f(v) : String(v)));
		});
		tr.addEventListener('click', function () {
			state.histTid = t.tid;
			renderHist();
			Array.prototype.forEach.call(tb.children, function (r) { r.classList.remove('sel'); });
			tr.classList.add('sel');
		});
		tb.appendChild(tr);
	});
	state.heads.forEach(function (h, i) {
		h.querySelector('.dir').textContent = COLUMNS[i] === state.sort ? (state.sortDesc ? ' \u25bc' : ' \u25b2') : '';
	});
	state.count.textContent = list.length + ' of ' + state.T.threads.length + ' threads';
	document.body.dataset.tableRows = String(list.length);
	state.shownThreads = list;
	if (state.drawTimeline)
		state.drawTimeline();
}

function renderThreads(T) {
	var s = section('threads', 'Threads'), input, table, tr;
	prepareThreads(T);
	s.appendChild(el('p', {class: 'note', text: 'CPU time as the kernel charged it; delay: from runnable (woken or preempted) to running; blocked: ' +
		'off CPU waiting (a syscall, a lock, a page fault). Click a column to sort, a row to see its delay histogram; the filter also selects the timeline\'s threads.'}));
	input = el('input', {type: 'search', placeholder: 'filter: name, tid, pid, syscall...', id: 'thread-filter'});
	input.value = state.filter;
	state.count = el('span', {class: 'muted'});
	s.appendChild(el('div', {class: 'tools'}, input, state.count));
	tr = el('tr');
	state.heads = COLUMNS.map(function (c) {
		var h = el('th', {class: 'sort' + (c.text ? '' : ' n'), title: c.tip || c.title}, c.title, el('span', {class: 'dir'}));
		h.addEventListener('click', function () {
			if (state.sort === c)
				state.sortDesc = !state.sortDesc;
			else {
				state.sort = c;
				state.sortDesc = !c.text;
			}
			renderTableBody();
		});
		tr.appendChild(h);
		return h;
	});
	state.tbody = el('tbody');
	table = el('table', {id: 'thread-table'}, el('thead', null, tr), state.tbody);
	s.appendChild(el('div', {class: 'scroll'}, table));
	input.addEventListener('input', function () {
		state.filter = input.value;
		renderTableBody();
	});
	renderTableBody();
}

/* ---- flame graphs ---- */

var FLAME_KINDS = [
	{key: 'off', title: 'off-CPU', unit: 'us', what: 'time blocked, by the blocked thread\'s stack (thread, then outermost to innermost frame)'},
	{key: 'wake', title: 'wake-up', unit: 'us', what: 'time blocked, by the blocked thread\'s stack, then "--", then the stack of what woke it (innermost first)'},
	{key: 'on', title: 'on-CPU', unit: 'samples', what: 'on-CPU samples by stack'},
];
var ROW_H = 18;

/* The tree from its JSON: parent before children, children in order. */
function flameTree(F) {
	var n = F.nodes.length / 3, i, p, t = {
		n: n, parent: new Int32Array(n), name: new Int32Array(n), weight: new Float64Array(n),
		start: new Float64Array(n), depth: new Int32Array(n), waker: new Uint8Array(n), names: F.names, total: F.total, maxDepth: 0,
	}, cursor = new Float64Array(n);
	for (i = 0; i < n; i++) {
		p = F.nodes[3 * i];
		t.parent[i] = p;
		t.name[i] = F.nodes[3 * i + 1];
		t.weight[i] = F.nodes[3 * i + 2];
		if (p >= 0) {
			t.start[i] = cursor[p];
			cursor[p] += t.weight[i];
			t.depth[i] = t.depth[p] + 1;
			t.waker[i] = t.waker[p] || F.names[t.name[i]] === '--' ? 1 : 0;
			if (t.depth[i] > t.maxDepth)
				t.maxDepth = t.depth[i];
		}
		cursor[i] = t.start[i];
	}
	return t;
}

function hashName(s) {
	var h = 2166136261, i;
	for (i = 0; i < s.length; i++)
		h = Math.imul(h ^ s.charCodeAt(i), 16777619);
	return (h >>> 0) / 4294967296;
}

function frameColor(t, i) {
	var name = t.names[t.name[i]], r = hashName(name);
	if (t.depth[i] === 1)
		return 'hsl(210,25%,' + (72 + 10 * r).toFixed(0) + '%)';
	if (name === '--')
		return '#9aa5b1';
	if (t.waker[i])
		return 'hsl(' + (190 + 40 * r).toFixed(0) + ',60%,' + (60 + 12 * r).toFixed(0) + '%)';
	if (/_\[k\]$/.test(name))
		return 'hsl(' + (20 + 15 * r).toFixed(0) + ',80%,' + (58 + 10 * r).toFixed(0) + '%)';
	return 'hsl(' + (40 + 20 * r).toFixed(0) + ',85%,' + (55 + 12 * r).toFixed(0) + '%)';
}

function searchMatcher(q) {
	var re;
	if (!q)
		return null;
	try {
		re = new RegExp(q, 'i');
	} catch (e) {
		q = q.toLowerCase();
		return function (s) { return s.toLowerCase().indexOf(q) >= 0; };
	}
	return function (s) { return re.test(s); };
}

function drawFlame() {
	var fs = state.flame, t = fs.tree, c = fs.canvas, dpr = window.devicePixelRatio || 1;
	var W = fs.box.clientWidth || 1200, focus = fs.focus, x0 = t.start[focus], span = t.weight[focus] || 1;
	var H = (t.maxDepth + 1) * ROW_H, ctx, i, x, w, y, drawn = 0, hits = 0, hitW = 0, name, match = searchMatcher(fs.search);
	var inHit = new Uint8Array(t.n), label, maxc;
	c.width = Math.floor(W * dpr);
	c.height = Math.floor(H * dpr);
	c.style.width = W + 'px';
	c.style.height = H + 'px';
	ctx = c.getContext('2d');
	ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
	ctx.clearRect(0, 0, W, H);
	ctx.font = '12px system-ui, "DejaVu Sans", sans-serif';
	ctx.textBaseline = 'middle';
	fs.boxes = [];
	for (i = 0; i < t.n; i++) {
		name = t.names[t.name[i]];
		if (i > 0 && match && match(name)) {
			if (!inHit[t.parent[i]])
				hitW += t.weight[i];
			inHit[i] = 1;
		} else if (i > 0)
			inHit[i] = inHit[t.parent[i]] ? 2 : 0;
		/* the focus's ancestors span the whole width, dimmed; its subtree is scaled */
		if (t.start[i] + t.weight[i] <= x0 || t.start[i] >= x0 + span)
			continue;
		if (t.depth[i] < t.depth[focus] || i === focus) {
			x = 0;
			w = W;
		} else {
			x = (t.start[i] - x0) / span * W;
			w = t.weight[i] / span * W;
		}
		if (w < 0.4)
			continue;
		y = t.depth[i] * ROW_H;
		ctx.fillStyle = inHit[i] === 1 ? '#d400d4' : frameColor(t, i);
		ctx.globalAlpha = t.depth[i] < t.depth[focus] ? 0.55 : 1;
		ctx.fillRect(x, y, Math.max(w - 0.5, 0.4), ROW_H - 1);
		drawn++;
		if (inHit[i] === 1)
			hits++;
		if (w > 24) {
			maxc = Math.floor((w - 6) / 6.5);
			label = i === 0 ? 'all (' + num(t.total) + ' ' + fs.kind.unit + ')' : name;
			if (label.length > maxc)
				label = label.slice(0, Math.max(maxc - 1, 1)) + '\u2026';
			ctx.fillStyle = inHit[i] === 1 ? '#fff' : '#111';
			ctx.fillText(label, x + 3, y + ROW_H / 2);
		}
		fs.boxes.push([x, y, w, i]);
	}
	ctx.globalAlpha = 1;
	fs.hitWeight = hitW;
	fs.status.textContent = (match ? 'matched: ' + pct(hitW, t.total) + ' of all (' + hits + ' frames drawn)' : '') +
		(focus ? (match ? '; ' : '') + 'zoomed on ' + t.names[t.name[focus]] + ' (' + pct(t.weight[focus], t.total) + ')' : '');
	document.body.dataset.flameKind = fs.kind.key;
	document.body.dataset.flameFrames = String(drawn);
	document.body.dataset.flameMatches = String(hits);
	document.body.dataset.flameMatchedShare = t.total ? (hitW / t.total).toFixed(4) : '0';
	document.body.dataset.flameFocus = focus ? t.names[t.name[focus]] : '';
	rectOf(c, 'flameRect');
}

/* Where an element is on the page (CSS pixels), for tests that look at a screenshot. */
function rectOf(e, key) {
	var r = e.getBoundingClientRect();
	document.body.dataset[key] = [r.left + window.scrollX, r.top + window.scrollY, r.width, r.height].map(Math.round).join(',');
}

function flameAt(ev) {
	var fs = state.flame, r = fs.canvas.getBoundingClientRect(), x = ev.clientX - r.left, y = ev.clientY - r.top, i, b;
	for (i = fs.boxes.length - 1; i >= 0; i--) {
		b = fs.boxes[i];
		if (x >= b[0] && x < b[0] + b[2] && y >= b[1] && y < b[1] + ROW_H)
			return b[3];
	}
	return -1;
}

function showFlame(kindKey) {
	var fs = state.flame, T = state.T, k = FLAME_KINDS.filter(function (x) { return x.key === kindKey; })[0] || FLAME_KINDS[0];
	fs.kind = k;
	fs.tabs.forEach(function (b) { b.classList.toggle('on', b.dataset.kind === k.key); });
	fs.what.textContent = k.title + ': ' + k.what + '. Click a frame to zoom, the top row to zoom out.';
	if (!T.flames[k.key] || !T.flames[k.key].total) {
		fs.tree = null;
		fs.canvas.hidden = true;
		fs.empty.hidden = false;
		fs.empty.textContent = k.key === 'on' && !T.on_cpu ? 'No on-CPU samples in this trace (record with --on-cpu).' :
			'No ' + k.title + ' time in this trace' + (T.stacks ? '.' : ' (recorded without stacks).');
		document.body.dataset.flameFrames = '0';
		document.body.dataset.flameMatches = '0';
		return;
	}
	fs.canvas.hidden = false;
	fs.empty.hidden = true;
	fs.tree = flameTree(T.flames[k.key]);
	fs.focus = 0;
	drawFlame();
}

function renderFlame(T) {
	var s = section('flame', 'Flame graphs'), fs = state.flame = {}, tip = document.getElementById('tip'), tabs, input, reset;
	tabs = el('span', {class: 'tabs'});
	fs.tabs = FLAME_KINDS.map(function (k) {
		var b = el('button', {type: 'button', 'data-kind': k.key, text: k.title});
		b.addEventListener('click', function () { showFlame(k.key); });
		tabs.appendChild(b);
		return b;
	});
	input = el('input', {type: 'search', id: 'flame-search', placeholder: 'search frames (text or regex)'});
	input.value = fs.search = PARAMS.search || '';
	reset = el('button', {type: 'button', text: 'reset zoom'});
	fs.status = el('span', {class: 'muted', id: 'flame-status'});
	s.appendChild(el('div', {class: 'tools'}, tabs, input, reset, fs.status));
	fs.what = el('p', {class: 'note'});
	s.appendChild(fs.what);
	fs.canvas = el('canvas', {id: 'flame-canvas'});
	fs.empty = el('p', {class: 'muted', hidden: ''});
	fs.box = el('div', {class: 'flamebox'}, fs.canvas, fs.empty);
	s.appendChild(fs.box);
	input.addEventListener('input', function () {
		fs.search = input.value;
		if (fs.tree)
			drawFlame();
	});
	reset.addEventListener('click', function () {
		fs.focus = 0;
		if (fs.tree)
			drawFlame();
	});
	fs.canvas.addEventListener('click', function (ev) {
		var i = flameAt(ev);
		if (i < 0)
			return;
		fs.focus = i === fs.focus ? fs.tree.parent[i] < 0 ? 0 : fs.tree.parent[i] : i;
		drawFlame();
	});
	fs.canvas.addEventListener('mousemove', function (ev) {
		var i = flameAt(ev), t = fs.tree;
		if (i < 0) {
			tip.hidden = true;
			return;
		}
		tip.textContent = t.names[t.name[i]] + '\n' + num(t.weight[i]) + ' ' + fs.kind.unit + ', ' + pct(t.weight[i], t.total) +
			' of all' + (i ? ', ' + pct(t.weight[i], t.weight[t.parent[i]]) + ' of its caller' : '');
		tip.style.left = Math.min(ev.clientX + 12, window.innerWidth - 320) + 'px';
		tip.style.top = (ev.clientY + 14) + 'px';
		tip.hidden = false;
	});
	fs.canvas.addEventListener('mouseleave', function () { tip.hidden = true; });
	showFlame(PARAMS.flame || 'off');
}

/* ---- scheduling-delay histograms ---- */

function bucketLabel(b, n) {
	var us = Math.pow(2, b);
	if (b === n - 1)
		return '\u2265 ' + dur(Math.pow(2, b - 1) * 1000);
	return '< ' + dur(us * 1000);
}

function renderHist() {
	var hs = state.hist, T = state.T, t = null, h, max = 0, first = -1, last = -1, b, g;
	if (state.histTid !== null)
		t = T.threads.filter(function (x) { return x.tid === state.histTid; })[0] || null;
	h = t ? t.hist || [] : T.hist;
	hs.title.textContent = t ? 'Delays of ' + t.comm + ' (tid ' + t.tid + ')' : 'Delays of all threads';
	hs.all.hidden = !t;
	for (b = 0; b < h.length; b++)
		if (h[b]) {
			max = Math.max(max, h[b]);
			if (first < 0)
				first = b;
			last = b;
		}
	g = hs.grid;
	g.textContent = '';
	if (!max) {
		g.appendChild(el('div', {class: 'muted', text: 'no scheduling delay recorded'}));
		return;
	}
	for (b = first; b <= last; b++) {
		g.appendChild(el('div', {class: 'lab', text: bucketLabel(b, h.length)}));
		g.appendChild(el('div', null, el('div', {class: 'bar', style: 'width:' + (100 * h[b] / max).toFixed(2) + '%'})));
		g.appendChild(el('div', {class: 'cnt', text: num(h[b])}));
	}
}

function renderDelays(T) {
	var s = section('delays', 'Scheduling delays'), hs = state.hist = {};
	s.appendChild(el('p', {class: 'note', text: 'How long threads waited, runnable, for a CPU (after a wake-up or a preemption): a count per power-of-two bucket. Click a thread in the table to see its own.'}));
	hs.title = el('h3');
	hs.all = el('button', {type: 'button', text: 'all threads'});
	hs.all.addEventListener('click', function () {
		state.histTid = null;
		renderHist();
	});
	s.appendChild(el('div', {class: 'tools'}, hs.title, hs.all));
	hs.grid = el('div', {class: 'hist', id: 'hist'});
	s.appendChild(hs.grid);
	renderHist();
}

/* ---- timeline ---- */

var TL_COLORS = [['running', [46, 160, 67]], ['runnable', [230, 140, 20]], ['blocked', [120, 150, 190]]];
var TL_MAX_ROWS = 300, TL_LABEL = 190, TL_ROW = 14;

function renderTimeline(T) {
	var s = section('timeline', 'Timeline'), c = el('canvas', {id: 'timeline-canvas'}), box = el('div', {class: 'flamebox'}, c), legend = el('span', {class: 'legend'});
	var tip = document.getElementById('tip'), note = el('span', {class: 'muted'});
	TL_COLORS.forEach(function (k) {
		legend.appendChild(el('span', {style: 'background:rgb(' + k[1].join(',') + ')'}));
		legend.appendChild(document.createTextNode(k[0]));
	});
	s.appendChild(el('p', {class: 'note', text: 'Each thread across the recording, in ' + T.buckets + ' columns of ' + dur(T.bucket_ns) +
		': in each, the share of the time it ran, waited for a CPU and was blocked (stacked bars). The threads are the table\'s, in its order.'}));
	s.appendChild(el('div', {class: 'tools'}, legend, note));
	s.appendChild(box);
	state.drawTimeline = function () {
		var rows = state.shownThreads.filter(function (t) { return t.timeline; }).slice(0, TL_MAX_ROWS);
		var W = box.clientWidth || 1200, dpr = window.devicePixelRatio || 1, H = 20 + rows.length * TL_ROW, ctx, plotW = W - TL_LABEL - 8, bw, sec, step, x;
		c.width = Math.floor(W * dpr);
		c.height = Math.floor(H * dpr);
		c.style.width = W + 'px';
		c.style.height = H + 'px';
		ctx = c.getContext('2d');
		ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
		ctx.clearRect(0, 0, W, H);
		ctx.font = '11px system-ui, "DejaVu Sans", sans-serif';
		ctx.textBaseline = 'middle';
		bw = plotW / T.buckets;
		/* time axis: about ten ticks, at round seconds */
		sec = T.bucket_ns * T.buckets / 1e9;
		step = Math.pow(10, Math.floor(Math.log10(sec / 10 || 1)));
		if (sec / step > 20)
			step *= 5;
		else if (sec / step > 10)
			step *= 2;
		ctx.fillStyle = '#5d6773';
		for (x = 0; x <= sec + 1e-9 && step > 0; x += step) {
			var px = TL_LABEL + x / sec * plotW;
			ctx.fillRect(px, 12, 1, H - 12);
			ctx.fillText(+x.toFixed(6) + ' s', px + 2, 6);
		}
		rows.forEach(function (t, r) {
			var y = 20 + r * TL_ROW, b, k, h, yy, label = t.comm + ' ' + t.tid;
			ctx.fillStyle = '#1d232a';
			ctx.fillText(label.length > 30 ? label.slice(0, 29) + '\u2026' : label, 2, y + TL_ROW / 2);
			for (b = 0; b < T.buckets; b++) {
				yy = y + TL_ROW - 1;
				for (k = 0; k < 3; k++) {
					h = t.timeline[TL_COLORS[k][0]][b] / 1000 * (TL_ROW - 2);
					if (h <= 0)
						continue;
					ctx.fillStyle = 'rgb(' + TL_COLORS[k][1].join(',') + ')';
					ctx.fillRect(TL_LABEL + b * bw, yy - h, Math.max(bw, 1), h);
					yy -= h;
				}
			}
		});
		note.textContent = rows.length + ' threads' + (state.shownThreads.length > rows.length ? ' (of ' + state.shownThreads.length + ': filter the table to see others)' : '');
		document.body.dataset.timelineRows = String(rows.length);
		state.tlRows = rows;
		rectOf(c, 'timelineRect');
	};
	c.addEventListener('mousemove', function (ev) {
		var r = c.getBoundingClientRect(), x = ev.clientX - r.left - TL_LABEL, row = Math.floor((ev.clientY - r.top - 20) / TL_ROW), t, b;
		t = state.tlRows && state.tlRows[row];
		b = Math.floor(x / ((r.width - TL_LABEL - 8) / T.buckets));
		if (!t || x < 0 || b >= T.buckets) {
			tip.hidden = true;
			return;
		}
		tip.textContent = t.comm + ' (tid ' + t.tid + ')\n' + (b * T.bucket_ns / 1e9).toFixed(3) + ' s + ' + dur(T.bucket_ns) + ': running ' +
			t.timeline.running[b] / 10 + '%, runnable ' + t.timeline.runnable[b] / 10 + '%, blocked ' + t.timeline.blocked[b] / 10 + '%';
		tip.style.left = Math.min(ev.clientX + 12, window.innerWidth - 320) + 'px';
		tip.style.top = (ev.clientY + 14) + 'px';
		tip.hidden = false;
	});
	c.addEventListener('mouseleave', function () { tip.hidden = true; });
	state.drawTimeline();
}

/* ---- longest episodes ---- */

function renderEpisodes(T) {
	var s = section('episodes', 'Longest blocking episodes'), tb = el('tbody');
	s.appendChild(el('p', {class: 'note', text: 'The ' + T.longest.length + ' longest times a thread was off CPU waiting (srvscope blocking lists them all). < : blocked already when the recording started; > : still blocked when it ended.'}));
	T.longest.forEach(function (e) {
		tb.appendChild(el('tr', null, el('td', {class: 'name', text: e.comm}), el('td', {class: 'n', text: e.tid}),
			el('td', {class: 'n', text: (e.start_ns / 1e9).toFixed(6) + ' s'}),
			el('td', {class: 'n', text: (e.from_start ? '< ' : '') + dur(e.duration_ns) + (e.unfinished ? ' >' : '')}),
			el('td', {text: e.syscall === null ? '-' : e.syscall}),
			el('td', {class: 'name', text: e.fd === null ? '-' : e.fd + (e.fd_desc ? ' ' + e.fd_desc : '')}),
			el('td', {class: 'name', text: e.wakeup + (e.waker ? ' ' + e.waker : '') + (e.waker_tid ? ' ' + e.waker_tid : '')})));
	});
	s.appendChild(el('div', {class: 'scroll'}, el('table', null, el('thead', null, el('tr', null,
		el('th', {text: 'thread'}), el('th', {class: 'n', text: 'tid'}), el('th', {class: 'n', text: 'start'}),
		el('th', {class: 'n', text: 'duration'}), el('th', {text: 'syscall'}), el('th', {text: 'fd'}), el('th', {text: 'woken by'}))), tb)));
}

/* ---- model and critical path: any JSON, shown generically ---- */

function jsonView(v, key, depth) {
	var d, sum, keys, cols, tb, tr, i;
	var label = key === null ? null : el('span', {class: 'k', text: key + ': '});
	if (v === null || typeof v !== 'object')
		return el('div', null, label, el('span', {class: typeof v === 'string' ? 's' : '', text: JSON.stringify(v)}));
	/* an array of flat objects: a table */
	if (Array.isArray(v) && v.length && v.every(function (x) { return x && typeof x === 'object' && !Array.isArray(x); })) {
		cols = [];
		v.forEach(function (x) {
			Object.keys(x).forEach(function (k) {
				if (cols.indexOf(k) < 0)
					cols.push(k);
			});
		});
		if (cols.length) {
			tr = el('tr');
			cols.forEach(function (k) { tr.appendChild(el('th', {text: k})); });
			tb = el('tbody');
			v.slice(0, 500).forEach(function (x) {
				var row = el('tr');
				cols.forEach(function (k) {
					/* nested values as compact JSON, cut (the whole in the cell's title) */
					var v = x[k] === undefined ? '' : typeof x[k] === 'string' ? x[k] : JSON.stringify(x[k]);
					row.appendChild(el('td', {class: 'name', title: v.length > 60 ? v.slice(0, 2000) : ''}, v.length > 60 ? v.slice(0, 59) + '\u2026' : v));
				});
				tb.appendChild(row);
			});
			d = el('details', {class: 'json'}, el('summary', null, label, v.length + ' items'),
				el('div', {class: 'scroll'}, el('table', null, el('thead', null, tr), tb)));
			if (depth < 2)
				d.open = true;
			return d;
		}
	}
	keys = Object.keys(v);
	sum = el('summary', null, label, Array.isArray(v) ? '[' + v.length + ']' : '{' + keys.length + '}');
	d = el('details', {class: 'json'}, sum);
	for (i = 0; i < keys.length && i < 1000; i++)
		d.appendChild(jsonView(v[keys[i]], Array.isArray(v) ? String(i) : keys[i], depth + 1));
	if (depth < 2)
		d.open = true;
	return d;
}

var SECTION_NAMES = {11: 'critical path', 12: 'critical path', 13: 'model', 14: 'model'};

function renderExtra(T) {
	var s = section('extra', 'Model and critical path'), types = Object.keys(T.other_sections || {}), any = false;
	if (types.length) {
		s.appendChild(el('p', {class: 'note', text: 'This trace also holds sections this report does not read itself: ' + types.map(function (ty) {
			return (SECTION_NAMES[ty] || 'type ' + ty) + ' (type ' + ty + ', ' + T.other_sections[ty] + ' sections)';
		}).join(', ') + '. Give their JSON with srvscope report --model FILE or --critical-path FILE to show them here.'}));
	}
	[['Critical path', CRITICAL, 'critical-view'], ['Model', MODEL, 'model-view']].forEach(function (x) {
		if (x[1] === null)
			return;
		any = true;
		s.appendChild(el('h3', {text: x[0]}));
		s.appendChild(el('div', {id: x[2]}, jsonView(x[1], null, 0)));
	});
	if (!any)
		s.appendChild(el('p', {class: 'muted', text: 'None given (srvscope report --model FILE.json, --critical-path FILE.json).'}));
}

/* ---- the page ---- */

function renderTrace(idx) {
	var T = DATA.traces[idx], sortKey = PARAMS.sort || 'blocked_ns';
	document.getElementById('main').textContent = '';
	state = {T: T, filter: PARAMS.filter || '', sortDesc: true, histTid: null, drawTimeline: null};
	state.sort = COLUMNS.filter(function (c) { return c.key === sortKey; })[0] || COLUMNS[9];
	state.sortDesc = !state.sort.text;
	document.title = 'srvscope report: ' + T.host + ', ' + dur(T.duration_ns) + (DATA.traces.length > 1 ? ' (' + (idx + 1) + '/' + DATA.traces.length + ')' : '');
	renderSummary(T);
	renderThreads(T);
	renderFlame(T);
	renderDelays(T);
	renderTimeline(T);
	renderEpisodes(T);
	renderExtra(T);
	rectOf(document.getElementById('thread-table'), 'tableRect');
}

function main() {
	var pick = document.getElementById('trace-pick'), idx = Math.min(Math.max(parseInt(PARAMS.trace || '0', 10) || 0, 0), DATA.traces.length - 1);
	if (DATA.traces.length > 1) {
		DATA.traces.forEach(function (T, i) {
			pick.appendChild(el('option', {value: String(i), text: T.file + ' (' + T.host + ', ' + dur(T.duration_ns) + ')'}));
		});
		pick.value = String(idx);
		pick.addEventListener('change', function () { renderTrace(parseInt(pick.value, 10)); });
		document.getElementById('trace-pick-label').hidden = false;
	}
	renderTrace(idx);
	var redraw = null;
	window.addEventListener('resize', function () {
		clearTimeout(redraw);
		redraw = setTimeout(function () {
			if (state.flame && state.flame.tree)
				drawFlame();
			if (state.drawTimeline)
				state.drawTimeline();
		}, 150);
	});
	document.body.dataset.ready = '1';
}

try {
	main();
} catch (e) {
	errors.push(String(e && e.stack || e));
	document.body.dataset.errors = String(errors.length);
	document.getElementById('main').appendChild(el('pre', {class: 'warn', text: 'The report could not be drawn: ' + e}));
	throw e;
}
