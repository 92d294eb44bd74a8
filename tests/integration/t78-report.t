#!/bin/bash
# 'srvscope report': the HTML page of a recording of rec_sleeper (7 ms then 3 ms asleep, over
# and over) opened in headless Chromium: no console message, the table and the flame graph
# drawn (pixels of a screenshot), searching sleep_seven highlights it, with the share of the
# off-CPU time that 'flame --kind=off' gives it. Then the page of hostile names (evilnames'
# control bytes, and names that are markup: '</script><b>x', '<i id=pwn>', ...): shown as
# text, never as elements, and the page stays whole.
. "$(dirname "$0")/lib.sh"
need_root
need_btf
CHROMIUM=$(command -v chromium || command -v chromium-browser) ||
	skip_all "no chromium (scripts/install-deps.sh installs it)"
SIZE=1280,1600

# chrome URL OUT ARGS...: headless Chromium on a file, its console messages (and its own
# log) in OUT.err. A fresh profile each time; bounded in time.
chrome() {
	local url=$1 out=$2
	shift 2
	timeout 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--user-data-dir="$TMP/profile.$RANDOM" --enable-logging=stderr --v=0 \
		--window-size=$SIZE "$@" "$url" 2>"$out.err"
}
# attrs DOMFILE: the data-* attributes the page leaves on <body>, as "key=value" lines.
attrs() {
	python3 - "$1" <<'PY'
import re, sys, html
m = re.search(r"<body([^>]*)>", open(sys.argv[1], encoding="utf-8").read())
for k, v in re.findall(r'data-([a-z-]+)="([^"]*)"', m.group(1) if m else ""):
    print("%s=%s" % (k, html.unescape(v)))
PY
}
attr() { sed -n "s/^$2=//p" "$1.attrs"; }
console_lines() { grep -c 'CONSOLE' "$1.err"; }

"$SRVSCOPE" record -o "$TMP/sl.trace" -- "$FIXTURES/rec_sleeper" 1 >/dev/null 2>"$TMP/rec.err"
ok $? "record rec_sleeper"
"$SRVSCOPE" report "$TMP/sl.trace" -o "$TMP/sl.html" 2>"$TMP/rep.err"
ok $? "report writes the page"
is "$(cat "$TMP/rep.err")" "" "report: nothing on stderr"
check "the page loads nothing from elsewhere" \
	bash -c "! grep -Eiq '<(link|img|iframe|object|embed)|src=|url\\(' '$TMP/sl.html'"
size=$(stat -c %s "$TMP/sl.html")
check "a small page for a small trace ($size bytes)" test "$size" -lt 500000

# The page's figures are the other reports': sched's runtime and delays, blocking's
# episodes per thread.
"$SRVSCOPE" sched --format=json --hist "$TMP/sl.trace" >"$TMP/sched.json"
"$SRVSCOPE" blocking --format=json "$TMP/sl.trace" >"$TMP/blocking.json"
python3 - "$TMP/sl.html" "$TMP/sched.json" "$TMP/blocking.json" <<'PY'
import json, re, sys
page = open(sys.argv[1], encoding="utf-8").read()
data = json.loads(re.search(r'<script type="application/json" id="srvscope-data">(.*?)</script>', page, re.S).group(1))
T = data["traces"][0]
sched = {t["tid"]: t for t in json.load(open(sys.argv[2]))["tasks"]}
blocking = {t["tid"]: t for t in json.load(open(sys.argv[3]))["tasks"]}
fails = 0
for t in T["threads"]:
    s, b = sched.get(t["tid"]), blocking.get(t["tid"], {"blocks": []})
    eps = b["blocks"]
    got = (t["runtime_ns"], t["max_delay_ns"], t["episodes"], t["blocked_ns"], t.get("hist"))
    want = (s["runtime_ns"], s["max_delay_ns"], len(eps), sum(e["duration_ns"] for e in eps),
            [next((h["count"] for h in s["hist"] if h["lt_ns"] == (1 << i) * 1000 or (h["lt_ns"] is None and i == 23)), 0) for i in range(24)])
    print("# %s %d: %s" % (t["comm"], t["tid"], "same as sched and blocking" if got == want else "page %s, reports %s" % (got, want)))
    fails += got != want
print("# %d threads in the page, %d in sched" % (len(T["threads"]), len(sched)))
sys.exit(fails > 0 or len(T["threads"]) < len(sched))
PY
ok $? "the page's runtime, delays, histograms, episodes and blocked time are sched's and blocking's"

# The share of sleep_seven in the off-CPU time, from the folded output.
"$SRVSCOPE" flame --kind=off "$TMP/sl.trace" >"$TMP/off.folded"
want=$(awk '{ n = $NF; t += n; if ($0 ~ /(^|;)sleep_seven(;| )/) s += n } END { printf "%.4f", t ? s / t : 0 }' "$TMP/off.folded")
diag "sleep_seven: $want of the off-CPU time in the folded output"

for q in "" "#search=sleep_seven"; do
	chrome "file://$TMP/sl.html$q" "$TMP/dom$q" --dump-dom >"$TMP/dom$q"
	ok $? "chromium opens the page${q:+ with $q}"
	attrs "$TMP/dom$q" >"$TMP/dom$q.attrs"
	v=${q:-the page}
	is "$(attr "$TMP/dom$q" ready)" 1 "$v: drawn to the end"
	is "$(attr "$TMP/dom$q" errors)" "" "$v: no script error"
	is "$(console_lines "$TMP/dom$q")" 0 "$v: no console message"
done
d="$TMP/dom"
check "table: a row per thread ($(attr "$d" table-rows))" test "$(attr "$d" table-rows)" -ge 2
check "flame graph: frames drawn ($(attr "$d" flame-frames))" test "$(attr "$d" flame-frames)" -ge 10
is "$(attr "$d" flame-matches)" 0 "no search, nothing highlighted"
d="$TMP/dom#search=sleep_seven"
check "search sleep_seven: highlighted ($(attr "$d" flame-matches) frames)" test "$(attr "$d" flame-matches)" -ge 1
got=$(attr "$d" flame-matched-share)
check "search sleep_seven: $got of the off-CPU time, flame's folded output says $want" \
	awk -v a="$got" -v b="$want" 'BEGIN { d = a - b; exit !(b > 0.1 && d < 0.002 && d > -0.002) }'

# Interactions, through the page's own event handlers: a copy of the page with a script of
# the test's after the page's (it runs once the page is drawn) clicks a frame, types a
# search and a filter, clicks a column title; what the page then shows goes to <body>.
cat >"$TMP/drive.js" <<'EOF'
var out = {}, fs = state.flame, t = fs.tree, i, b, r, c = document.getElementById('flame-canvas');
function click(el, x, y) {
	el.dispatchEvent(new MouseEvent('click', {clientX: x, clientY: y, bubbles: true}));
}
function type(el, text) {
	el.value = text;
	el.dispatchEvent(new Event('input', {bubbles: true}));
}
type(document.getElementById('flame-search'), 'sleep_three');
out.searchMatches = +document.body.dataset.flameMatches;
type(document.getElementById('flame-search'), 'no_such_frame_anywhere');
out.noMatches = +document.body.dataset.flameMatches;
r = c.getBoundingClientRect();
for (i = 0; i < fs.boxes.length; i++) {
	b = fs.boxes[i];
	if (t.names[t.name[b[3]]] === 'sleep_seven')
		break;
}
click(c, r.left + b[0] + b[2] / 2, r.top + b[1] + 5);
out.zoomed = document.body.dataset.flameFocus;
out.zoomedFrames = +document.body.dataset.flameFrames;
function column(n) {
	return Array.prototype.map.call(document.querySelectorAll('#thread-table tbody tr'),
		function (tr) { return +tr.children[n].textContent.replace(/,/g, ''); });
}
var heads = document.querySelectorAll('#thread-table th');
for (i = 0; i < heads.length; i++)
	if (heads[i].firstChild.textContent === 'switches')
		b = heads[i];
click(b, 0, 0);
out.sortedBySwitches = column(5);
click(b, 0, 0);
out.sortedBack = column(5);
type(document.getElementById('thread-filter'), 'nanosleep');
out.filteredRows = +document.body.dataset.tableRows;
out.timelineRows = +document.body.dataset.timelineRows;
document.body.dataset.drive = JSON.stringify(out);
EOF
python3 - "$TMP/sl.html" "$TMP/drive.js" "$TMP/driven.html" <<'PY'
import sys
page, js = open(sys.argv[1], encoding="utf-8").read(), open(sys.argv[2]).read()
i = page.rindex("</body>")
open(sys.argv[3], "w", encoding="utf-8").write(page[:i] + "<script>" + js + "</script>\n" + page[i:])
PY
chrome "file://$TMP/driven.html" "$TMP/driven" --dump-dom >"$TMP/driven.dom"
attrs "$TMP/driven.dom" >"$TMP/driven.dom.attrs"
is "$(attr "$TMP/driven.dom" errors)$(console_lines "$TMP/driven")" 0 "driven: no script error, no console message"
python3 - "$(attr "$TMP/driven.dom" drive)" "$(attr "$TMP/dom" flame-frames)" <<'PY'
import json, sys
out, frames = json.loads(sys.argv[1] or "{}"), int(sys.argv[2])
fails = 0
def check(what, cond):
    global fails
    print(("# fine: " if cond else "# WRONG: ") + what)
    fails += not cond
check("a click on sleep_seven zooms on it (%s)" % out.get("zoomed"), out.get("zoomed") == "sleep_seven")
check("zoomed: %s frames drawn of %d" % (out.get("zoomedFrames"), frames), 0 < out.get("zoomedFrames", 0) < frames)
check("typing sleep_three highlights it (%s frames)" % out.get("searchMatches"), out.get("searchMatches", 0) >= 1)
check("a search that matches nothing highlights nothing (%s)" % out.get("noMatches"), out.get("noMatches") == 0)
s = out.get("sortedBySwitches", [])
check("a click on 'switches' sorts by it, descending: %s" % s, len(s) >= 2 and s == sorted(s, reverse=True))
s2 = out.get("sortedBack", [])
check("a second click, ascending: %s" % s2, s2 == sorted(s) and s2 != s)
check("typing a filter keeps one row (%s), and the timeline follows (%s)" % (out.get("filteredRows"), out.get("timelineRows")),
      out.get("filteredRows") == 1 and out.get("timelineRows") == 1)
sys.exit(fails > 0)
PY
ok $? "zoom by a click, search and filter by typing, sort by a click"

# Pixels: the table and the flame graph are on the screen, and the search's highlight (the
# page without a search highlights no frame: data-flame-matches above).
chrome "file://$TMP/sl.html#search=sleep_seven" "$TMP/shot" --screenshot="$TMP/hit.png" >/dev/null
ok $? "screenshot with a search"
python3 - "$TMP/hit.png" "$(attr "$TMP/dom" flame-rect)" "$(attr "$TMP/dom" table-rect)" <<'PY'
import struct, sys, zlib

def read_png(path, last):
    """8-bit RGB or RGBA, not interlaced (what Chromium writes): rows of bytes, up to last."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, []
    while pos < len(data):
        n, typ = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if typ == b"IHDR":
            w, h, depth, ctype, _, _, inter = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and ctype in (2, 6) and not inter, "unexpected PNG format"
        elif typ == b"IDAT":
            idat.append(body)
        pos += 12 + n
    bpp = 3 if ctype == 2 else 4
    raw, stride, prev, rows = zlib.decompress(b"".join(idat)), w * bpp, bytearray(w * bpp), []
    for y in range(min(h, last)):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if f == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 255
        elif f == 2:
            line = bytearray((a + b) & 255 for a, b in zip(line, prev))
        elif f == 3:
            for i in range(stride):
                line[i] = (line[i] + ((line[i - bpp] if i >= bpp else 0) + prev[i]) // 2) & 255
        elif f == 4:
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b, c = prev[i], (prev[i - bpp] if i >= bpp else 0)
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return w, h, bpp, rows

def pixels(img, rect):
    w, h, bpp, rows = img
    x, y, rw, rh = rect
    for yy in range(max(y, 0), min(y + rh, h)):
        r = rows[yy]
        for xx in range(max(x, 0), min(x + rw, w)):
            yield tuple(r[xx * bpp:xx * bpp + 3])

hit = lambda p: abs(p[0] - 212) < 12 and p[1] < 20 and abs(p[2] - 212) < 12  # #d400d4
flame = [int(v) for v in sys.argv[2].split(",")]
table = [int(v) for v in sys.argv[3].split(",")]
shot = read_png(sys.argv[1], max(flame[1] + flame[3], table[1] + table[3]))
fails = 0
def check(what, cond):
    global fails
    print(("# fine: " if cond else "# WRONG: ") + what)
    fails += not cond
colors = set(pixels(shot, flame))
check("flame graph %s: %d colours" % (flame, len(colors)), len(colors) >= 8)
inked = sum(1 for p in pixels(shot, table) if sum(p) < 600)
check("table %s: %d dark pixels (text)" % (table, inked), inked > 0.01 * table[2] * table[3])
n = sum(1 for p in pixels(shot, flame) if hit(p))
check("highlight colour: %d pixels of the flame graph's %d" % (n, flame[2] * flame[3]), 1000 < n < flame[2] * flame[3] / 2)
sys.exit(fails > 0)
PY
ok $? "the screenshots show the table, the flame graph and the highlighted search"

# Hostile names: control bytes (evilnames), and markup as thread names (15 bytes at most).
start_fixture "$FIXTURES/evilnames" 30 || { ok 1 "evilnames starts"; done_testing; }
"$SRVSCOPE" record -p "$FPID" -d 1 -o "$TMP/evil.trace" >/dev/null 2>&1
ok $? "record evilnames"
cat >"$TMP/markup.sh" <<'EOF'
name() { printf '%s' "$1" >/proc/self/comm; for i in 1 2 3 4 5; do sleep 0.02; done; }
name '</script><b>x' &
name '<i id=pwn>' &
name "<!--&amp;\"'" &
name "$(printf 'a\342\200\250b<')" &
wait
EOF
"$SRVSCOPE" record -o "$TMP/markup.trace" -- bash "$TMP/markup.sh" >/dev/null 2>&1
ok $? "record threads named with markup"
echo '{"note": "</script><i id=pwn2>", "rows": [{"a": "<b id=pwn3>", "b": 1}]}' >"$TMP/model.json"
"$SRVSCOPE" report "$TMP/evil.trace" "$TMP/markup.trace" --model "$TMP/model.json" -o "$TMP/evil.html" 2>/dev/null
ok $? "report of both traces and a model"
mkfifo "$TMP/model.fifo"
out=$(timeout 10 "$SRVSCOPE" report "$TMP/markup.trace" --model "$TMP/model.fifo" -o "$TMP/fifo.html" 2>&1)
st=$?
ok $((st == 0 || st == 124)) "a --model that is a FIFO: refused, not waited on ($st)"
like "$out" "model .*: not a regular file" "a --model that is a FIFO: the line says so"
why=$(python3 "$TOP/tests/integration/check_names.py" text "$TMP/evil.html" 2>&1)
ok $? "the page: no control byte, valid UTF-8 ${why:+($why)}"
is "$(grep -io '</script' "$TMP/evil.html" | wc -l)" 4 "the page's own four scripts end where they should"
for n in 0 1; do
	d="$TMP/evil$n"
	# trace 1: only the rows whose name, title... hold a '<': the four named with markup
	chrome "file://$TMP/evil.html#trace=$n$([ $n = 1 ] && echo '&filter=%3C')" "$d" --dump-dom >"$d"
	ok $? "chromium opens trace $n"
	attrs "$d" >"$d.attrs"
	is "$(attr "$d" ready)" 1 "trace $n: drawn to the end"
	is "$(attr "$d" errors)$(console_lines "$d")" 0 "trace $n: no script error, no console message"
	check "trace $n: no element made from a name" \
		bash -c "! grep -Eq '<(b|i)( id=\"pwn[23]?\")?>|id=\"pwn' '$d'"
	check "trace $n: the model's strings shown as text" \
		grep -q '&lt;/script&gt;&lt;i id=pwn2&gt;' "$d"
done
check "evilnames' names shown escaped" grep -q '>\\x01\\x02\\x03' "$TMP/evil0"
is "$(attr "$TMP/evil1" table-rows)" 4 "#filter=%3C: the four threads named with a '<'"
check "names with markup shown as text" \
	bash -c "grep -q '<td[^>]*>&lt;i id=pwn&gt;</td>' '$TMP/evil1' && grep -q '<td[^>]*>&lt;/script&gt;&lt;b&gt;x</td>' '$TMP/evil1'"

# Errors: one line, and no page left behind.
printf 'not a trace' >"$TMP/junk"
"$SRVSCOPE" report "$TMP/junk" -o "$TMP/junk.html" 2>"$TMP/err"
is $? 1 "not a trace: exit status 1"
is "$(wc -l <"$TMP/err")" 1 "not a trace: one line"
check "not a trace: no page written" test ! -e "$TMP/junk.html"
"$SRVSCOPE" report "$TMP/sl.trace" 2>/dev/null
is $? 2 "no -o: a usage error"
for args in "--frobnicate=1" "-Z" "--buckets 5 $TMP/sl.trace -o $TMP/b.html" "-o"; do
	# shellcheck disable=SC2086
	"$SRVSCOPE" report $args >"$TMP/out" 2>"$TMP/err"
	is "$?:$(wc -l <"$TMP/err"):$(wc -c <"$TMP/out")" "2:1:0" "report $args: exit status 2, one line, nothing written"
done
like "$(cat "$TMP/err")" "^srvscope: report: option '-o' needs a value \(see 'srvscope report --help'\)$" "-o without its value: says so"
"$SRVSCOPE" report --help >"$TMP/out"
is "$?:$(head -1 "$TMP/out" | cut -d' ' -f1-3)" "0:usage: srvscope report" "--help: the usage, exit status 0"
"$SRVSCOPE" report "$TMP/sl.trace" -o "$TMP/sl.html" 2>"$TMP/err"
is $? 1 "an existing page is not replaced without --force"
done_testing
