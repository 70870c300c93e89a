import Foundation
import MoonEvents
import MoonJSON

/// A trace as one self-contained HTML page: a timeline of the run drawn on
/// a `<canvas>` (a lane per queue slot, the critical path outlined, zoom
/// with the wheel, a drag or the buttons, each span's command, duration,
/// wait, CPU and memory on hover and click), and beside it a table of the
/// nodes, slowest first, with a filter. No network: the script, the style
/// and the data are inline, and the page's Content-Security-Policy allows
/// nothing else. Names and commands come from a cloned repository: the data
/// is JSON in a `<script type="application/json">` with every `<`, `>` and
/// `&` escaped, and the page puts text only through `textContent`.
public enum TraceHTML {
    public static func document(_ model: TraceModel) -> String {
        page.replacingOccurrences(of: "@@DATA@@", with: data(model))
    }

    /// The model as the page's JSON, safe inside a `<script>` element.
    static func data(_ model: TraceModel) -> String {
        var o = JSONObjectWriter()
        o.field("graph", model.graph)
        o.field("started", DateText.rfc3339(model.startedAt))
        o.field("duration", Int(model.durationMicroseconds))
        if let ok = model.ok { o.rawField("ok", ok ? "true" : "false") }
        if let signal = model.interrupted { o.field("interrupted", signal) }
        o.field("upToDate", model.upToDate)
        var queues: [String] = []
        for queue in model.queues {
            var q = JSONObjectWriter()
            q.field("name", queue.name)
            q.field("width", queue.width)
            q.field("lanes", queue.lanes)
            queues.append(q.text)
        }
        o.rawField("queues", "[" + queues.joined(separator: ",") + "]")
        o.rawField("critical", JSONString.array(model.criticalPath))
        var rows: [String] = []
        rows.reserveCapacity(model.attempts.count)
        for a in model.attempts {
            var fields: [String] = []
            func text(_ s: String?) -> String {
                guard let s else { return "null" }
                var out = ""
                JSONString.quote(s, into: &out)
                return out
            }
            func number(_ n: Int64?) -> String { n.map { String($0) } ?? "null" }
            fields = [text(a.node), String(a.queue), String(a.slot), String(a.attempt), String(a.start), String(a.duration),
                      number(a.waitedMilliseconds.map(Int64.init)), text(a.command), text(a.outcome.rawValue),
                      number(a.exitCode.map(Int64.init)), text(a.error), a.critical ? "1" : "0",
                      number(a.usage.map { Int64($0.cpuUserMilliseconds) }), number(a.usage.map { Int64($0.cpuSystemMilliseconds) }), number(a.usage?.maxRSSBytes)]
            rows.append("[" + fields.joined(separator: ",") + "]")
        }
        o.rawField("attempts", "[" + rows.joined(separator: ",\n") + "]")
        var restored: [String] = []
        for r in model.restored {
            var out = "["
            JSONString.quote(r.node, into: &out)
            restored.append(out + ",\(r.time),\(r.files),\(r.bytes)]")
        }
        o.rawField("restored", "[" + restored.joined(separator: ",") + "]")
        o.rawField("flows", "[" + model.flows().map { "[\($0.from),\($0.to)]" }.joined(separator: ",") + "]")
        return escapedForScript(o.text)
    }

    /// JSON text that cannot end its `<script>` element or open markup:
    /// `<`, `>` and `&` only ever stand inside strings there, where `\u003c`
    /// reads the same. (JSONString already escapes U+2028 and U+2029.)
    static func escapedForScript(_ json: String) -> String {
        var out = ""
        out.reserveCapacity(json.utf8.count)
        for scalar in json.unicodeScalars {
            switch scalar {
            case "<": out += "\\u003c"
            case ">": out += "\\u003e"
            case "&": out += "\\u0026"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    private static let page = #"""
<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>moon trace</title>
<style>
:root { --bg: #fbfbfd; --fg: #1d1d24; --muted: #6b6b78; --line: #dcdce4; --crit: #f5a300; }
* { box-sizing: border-box; }
body { margin: 0; font: 13px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg); }
header { padding: 10px 16px 6px; border-bottom: 1px solid var(--line); background: #fff; }
h1 { font-size: 16px; margin: 0 0 2px; }
#summary { color: var(--muted); }
.bar { display: flex; gap: 8px; align-items: center; flex-wrap: wrap; margin-top: 6px; }
button { font: inherit; padding: 2px 10px; border: 1px solid var(--line); background: #fff; border-radius: 4px; cursor: pointer; }
button:hover { background: #f0f0f6; }
.key { display: inline-flex; align-items: center; gap: 4px; color: var(--muted); }
.sw { width: 12px; height: 12px; border-radius: 2px; display: inline-block; }
#timeline { position: relative; border-bottom: 1px solid var(--line); background: #fff; overflow-y: auto; max-height: 62vh; }
canvas { display: block; width: 100%; cursor: grab; }
canvas.dragging { cursor: grabbing; }
#tip { position: absolute; pointer-events: none; background: rgba(29,29,36,.94); color: #fff; padding: 6px 8px; border-radius: 4px;
       max-width: 520px; white-space: pre-wrap; font-size: 12px; z-index: 2; }
main { display: grid; grid-template-columns: minmax(280px, 1fr) 2fr; gap: 0; }
#details { padding: 10px 16px; border-right: 1px solid var(--line); white-space: pre-wrap; word-break: break-all; }
#details .k { color: var(--muted); }
#list { padding: 10px 16px; }
#filter { font: inherit; padding: 3px 6px; width: 260px; border: 1px solid var(--line); border-radius: 4px; }
#shown { color: var(--muted); margin-left: 8px; }
table { border-collapse: collapse; width: 100%; margin-top: 6px; }
th, td { text-align: left; padding: 2px 8px 2px 0; border-bottom: 1px solid #eee; white-space: nowrap; }
td.name { max-width: 420px; overflow: hidden; text-overflow: ellipsis; }
td.num, th.num { text-align: right; }
tr.node { cursor: pointer; }
tr.node:hover, tr.node.selected { background: #fff3d6; }
tr.critical td.name { font-weight: 600; }
</style>
</head>
<body>
<header>
  <h1 id="title">moon trace</h1>
  <div id="summary"></div>
  <div class="bar">
    <button id="zoom-in" title="Zoom in">+</button><button id="zoom-out" title="Zoom out">&minus;</button><button id="fit" title="Whole run">fit</button>
    <label class="key"><input type="checkbox" id="arrows"> needs</label>
    <span class="key"><span class="sw" style="background:#4e79a7"></span>succeeded</span>
    <span class="key"><span class="sw" style="background:#e15759"></span>failed</span>
    <span class="key"><span class="sw" style="background:#f28e2b"></span>retried</span>
    <span class="key"><span class="sw" style="background:#a0a0aa"></span>canceled</span>
    <span class="key"><span class="sw" style="background:#fff;outline:2px solid var(--crit)"></span>critical path</span>
    <span class="key"><span class="sw" style="background:#59a14f"></span>restored from cache</span>
    <span class="key">wheel: zoom · drag: pan · click: details</span>
  </div>
</header>
<div id="timeline"><canvas id="canvas" height="200"></canvas><div id="tip" hidden></div></div>
<main>
  <section id="details">Click a span or a node for its details.</section>
  <section id="list">
    <input id="filter" type="search" placeholder="filter nodes by name" aria-label="filter nodes">
    <span id="shown"></span>
    <table id="nodes"><thead><tr><th>node</th><th>queue</th><th class="num">attempts</th><th class="num">duration</th>
      <th class="num">wait</th><th class="num">CPU</th><th class="num">memory</th><th>result</th></tr></thead><tbody></tbody></table>
  </section>
</main>
<script type="application/json" id="trace-data">@@DATA@@</script>
<script>
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("trace-data").textContent);
  const $ = (id) => document.getElementById(id);
  const LIST_LIMIT = 500;
  const colors = { succeeded: "#4e79a7", failed: "#e15759", retried: "#f28e2b", canceled: "#a0a0aa", running: "#76b7b2" };
  // attempts: [node, queue, slot, attempt, start, dur, waited, command, outcome, exit, error, critical, cpuUser, cpuSys, rss]
  const A = data.attempts.map((a, i) => ({ i, node: a[0], q: a[1], slot: a[2], attempt: a[3], start: a[4], dur: a[5],
    waited: a[6], command: a[7], outcome: a[8], exit: a[9], error: a[10], critical: a[11] === 1,
    cpuUser: a[12], cpuSys: a[13], rss: a[14] }));
  const total = A.reduce((m, a) => Math.max(m, a.start + a.dur), Math.max(1, data.duration));

  function ms(us) {
    if (us == null) return "";
    if (us === 0) return "0 ms";
    const v = us / 1000;
    if (v < 1) return v.toFixed(2) + " ms";
    if (v < 1000) return v.toFixed(0) + " ms";
    if (v < 60000) return (v / 1000).toFixed(2) + " s";
    return Math.floor(v / 60000) + "m" + ((v % 60000) / 1000).toFixed(0) + "s";
  }
  function bytes(n) {
    if (n == null) return "";
    const units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let u = 0, v = n;
    while (v >= 1024 && u < units.length - 1) { v /= 1024; u++; }
    return v.toFixed(u ? 1 : 0) + " " + units[u];
  }
  function cpu(a) { return a.cpuUser == null ? "" : ms((a.cpuUser + a.cpuSys) * 1000); }

  // Rows: the critical path, the cache's restores, then each queue's lanes.
  const rows = [];
  if (data.critical.length) rows.push({ label: "critical path", kind: "critical", items: [] });
  if (data.restored.length) rows.push({ label: "restored from cache", kind: "cache", items: [] });
  const laneRow = [];
  data.queues.forEach((q, qi) => {
    laneRow[qi] = [];
    for (let s = 0; s < q.lanes; s++) { laneRow[qi][s] = rows.length; rows.push({ label: q.name + " · slot " + (s + 1), kind: "lane", items: [] }); }
  });
  for (const a of A) {
    a.row = laneRow[a.q][a.slot];
    rows[a.row].items.push(a);
    if (a.critical && rows[0].kind === "critical") rows[0].items.push(a);
  }
  const cacheRow = rows.find((r) => r.kind === "cache");
  const restores = data.restored.map((r) => ({ node: r[0], start: r[1], dur: 0, files: r[2], bytes: r[3], restored: true }));
  if (cacheRow) cacheRow.items = restores;
  for (const r of rows) r.items.sort((x, y) => x.start - y.start);

  // Title and summary, as text.
  const ended = data.ok === true ? "ok" : data.ok === false ? (data.interrupted ? "interrupted (" + data.interrupted + ")" : "FAILED") : "did not finish";
  $("title").textContent = "moon trace · " + data.graph;
  document.title = "moon trace · " + data.graph;
  const nodes = new Map();
  for (const a of A) {
    let n = nodes.get(a.node);
    if (!n) { n = { node: a.node, q: a.q, attempts: [], dur: 0, waited: null, cpu: null, rss: null, outcome: "", critical: false }; nodes.set(a.node, n); }
    n.attempts.push(a);
    n.dur += a.dur;
    if (a.waited != null) n.waited = a.waited;
    if (a.cpuUser != null) n.cpu = (n.cpu || 0) + a.cpuUser + a.cpuSys;
    if (a.rss != null) n.rss = Math.max(n.rss || 0, a.rss);
    n.outcome = a.outcome;
    n.critical = n.critical || a.critical;
  }
  // Restored nodes ran nowhere, but are listed: a filter finds them too.
  for (const r of restores) {
    if (!nodes.has(r.node)) nodes.set(r.node, { node: r.node, q: null, attempts: [r], dur: 0, waited: null, cpu: null, rss: null,
      outcome: "restored from cache", critical: false });
  }
  $("summary").textContent = ended + " · " + ms(total) + " · " + (nodes.size - restores.filter((r) => nodes.get(r.node).q == null).length) + " nodes ran (" + A.length + " attempts)"
    + (data.restored.length ? " · " + data.restored.length + " restored from cache" : "")
    + (data.upToDate ? " · " + data.upToDate + " up to date" : "")
    + " · started " + data.started
    + (data.critical.length ? " · critical path: " + data.critical.length + " nodes" : "");

  // The timeline.
  const canvas = $("canvas"), ctx = canvas.getContext("2d"), tip = $("tip");
  const LABEL = 170, AXIS = 22;
  const rowH = Math.max(3, Math.min(20, Math.floor(14000 / Math.max(1, rows.length))));
  let view = { t0: 0, t1: total * 1.02 };
  let selected = null;
  const arrows = $("arrows");
  arrows.checked = data.flows.length > 0 && data.flows.length <= 3000;

  function size() {
    const dpr = window.devicePixelRatio || 1;
    const width = canvas.clientWidth || 800;
    const height = AXIS + rows.length * rowH + 4;
    canvas.style.height = height + "px";
    canvas.width = Math.round(width * dpr);
    canvas.height = Math.round(height * dpr);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  }
  function x(t) { return LABEL + (t - view.t0) / (view.t1 - view.t0) * (canvas.clientWidth - LABEL - 8); }
  function t(px) { return view.t0 + (px - LABEL) / (canvas.clientWidth - LABEL - 8) * (view.t1 - view.t0); }
  function niceStep(span, n) {
    const raw = span / n, p = Math.pow(10, Math.floor(Math.log10(raw)));
    for (const m of [1, 2, 5, 10]) if (m * p >= raw) return m * p;
    return 10 * p;
  }
  function draw() {
    const W = canvas.clientWidth, H = AXIS + rows.length * rowH + 4;
    ctx.clearRect(0, 0, W, H);
    ctx.font = "11px system-ui, sans-serif";
    ctx.textBaseline = "middle";
    // Axis and grid.
    const step = niceStep(view.t1 - view.t0, Math.max(2, (W - LABEL) / 110));
    ctx.strokeStyle = "#ececf2"; ctx.fillStyle = "#6b6b78";
    for (let g = Math.ceil(view.t0 / step) * step; g <= view.t1; g += step) {
      const gx = x(g);
      ctx.beginPath(); ctx.moveTo(gx, AXIS - 4); ctx.lineTo(gx, H); ctx.stroke();
      if (gx < W - 44) ctx.fillText(ms(g), gx + 3, AXIS / 2);
    }
    // Rows.
    rows.forEach((r, ri) => {
      const y = AXIS + ri * rowH;
      if (ri % 2) { ctx.fillStyle = "#f7f7fb"; ctx.fillRect(LABEL, y, W - LABEL, rowH); }
      const lo = view.t0, hi = view.t1;
      for (const a of r.items) {
        if (a.start > hi) break;
        if (a.start + a.dur < lo) continue;
        const x0 = Math.max(LABEL, x(a.start)), x1 = Math.min(W, x(a.start + a.dur));
        const w = Math.max(1, x1 - x0);
        if (a.restored) {
          ctx.fillStyle = "#59a14f";
          ctx.fillRect(x0 - 1, y + 2, 3, rowH - 4);
          continue;
        }
        ctx.fillStyle = colors[a.outcome] || "#888";
        ctx.fillRect(x0, y + 1, w, rowH - 2);
        if (a.critical) {
          ctx.strokeStyle = "#f5a300"; ctx.lineWidth = 2;
          ctx.strokeRect(x0 + 1, y + 2, Math.max(1, w - 2), Math.max(1, rowH - 4));
          ctx.lineWidth = 1;
        }
        if (selected && selected.node === a.node) {
          ctx.strokeStyle = "#1d1d24"; ctx.lineWidth = 2;
          ctx.strokeRect(x0, y + 1, w, rowH - 2); ctx.lineWidth = 1;
        }
        if (w > 36 && rowH >= 12) {
          ctx.save(); ctx.beginPath(); ctx.rect(x0 + 2, y, w - 4, rowH); ctx.clip();
          ctx.fillStyle = "#fff"; ctx.fillText(a.node, x0 + 4, y + rowH / 2);
          ctx.restore();
        }
      }
    });
    // Needs.
    if (arrows.checked) {
      ctx.strokeStyle = "rgba(60,60,80,.35)";
      for (const [f, to] of data.flows) {
        const a = A[f], b = A[to];
        if (a.start + a.dur < view.t0 && b.start < view.t0) continue;
        if (a.start > view.t1) continue;
        const ax = x(a.start + a.dur), ay = AXIS + a.row * rowH + rowH / 2;
        const bx = x(b.start), by = AXIS + b.row * rowH + rowH / 2;
        ctx.beginPath(); ctx.moveTo(ax, ay); ctx.bezierCurveTo((ax + bx) / 2, ay, (ax + bx) / 2, by, bx, by); ctx.stroke();
      }
    }
    // Labels over everything, on a plain column.
    ctx.fillStyle = "#fff"; ctx.fillRect(0, 0, LABEL, H);
    ctx.strokeStyle = "#dcdce4"; ctx.beginPath(); ctx.moveTo(LABEL, 0); ctx.lineTo(LABEL, H); ctx.stroke();
    if (rowH >= 9) {
      rows.forEach((r, ri) => {
        ctx.fillStyle = r.kind === "critical" ? "#b07500" : r.kind === "cache" ? "#3d7a36" : "#1d1d24";
        ctx.fillText(r.label.length > 26 ? r.label.slice(0, 25) + "…" : r.label, 6, AXIS + ri * rowH + rowH / 2);
      });
    }
  }
  function at(px, py) {
    const ri = Math.floor((py - AXIS) / rowH);
    if (px < LABEL || ri < 0 || ri >= rows.length) return null;
    const time = t(px), slack = (view.t1 - view.t0) / canvas.clientWidth * 3;
    let best = null;
    for (const a of rows[ri].items) {
      if (a.start - slack > time) break;
      if (time <= a.start + a.dur + slack) best = a;
    }
    return best;
  }
  function describe(a) {
    if (a.restored) return [["node", a.node], ["restored from cache", a.files + " files, " + bytes(a.bytes)], ["at", ms(a.start)]];
    const q = data.queues[a.q];
    const lines = [["node", a.node], ["result", a.outcome + (a.exit != null ? " (exit " + a.exit + ")" : "")],
      ["duration", ms(a.dur)], ["wait", a.waited != null ? ms(a.waited * 1000) : ""], ["start", ms(a.start)],
      ["queue", q.name + " · slot " + (a.slot + 1) + " of " + q.width], ["attempt", String(a.attempt)],
      ["CPU", a.cpuUser != null ? ms(a.cpuUser * 1000) + " user, " + ms(a.cpuSys * 1000) + " sys" : "not measured"],
      ["memory", a.rss != null ? bytes(a.rss) + " peak" : "not measured"]];
    if (a.critical) lines.push(["critical path", "yes"]);
    if (a.error) lines.push(["error", a.error]);
    if (a.command) lines.push(["command", a.command]);
    return lines.filter((l) => l[1] !== "");
  }
  function show(target, lines) {
    target.textContent = "";
    for (const [k, v] of lines) {
      const key = document.createElement("span"); key.className = "k"; key.textContent = k + ": ";
      target.appendChild(key);
      target.appendChild(document.createTextNode(v + "\n"));
    }
  }
  function select(a) {
    selected = a;
    show($("details"), describe(a));
    for (const tr of document.querySelectorAll("tr.selected")) tr.classList.remove("selected");
    const tr = rowsByNode.get(a.node);
    if (tr) tr.classList.add("selected");
    draw();
  }

  let drag = null;
  canvas.addEventListener("mousedown", (e) => { drag = { x: e.offsetX, t0: view.t0, t1: view.t1, moved: false }; canvas.classList.add("dragging"); });
  window.addEventListener("mouseup", (e) => {
    if (drag && !drag.moved && e.target === canvas) { const a = at(e.offsetX, e.offsetY); if (a) select(a); }
    drag = null; canvas.classList.remove("dragging");
  });
  canvas.addEventListener("mousemove", (e) => {
    if (drag) {
      const dt = (e.offsetX - drag.x) / (canvas.clientWidth - LABEL) * (drag.t1 - drag.t0);
      if (Math.abs(e.offsetX - drag.x) > 2) drag.moved = true;
      view = { t0: drag.t0 - dt, t1: drag.t1 - dt };
      tip.hidden = true; draw(); return;
    }
    const a = at(e.offsetX, e.offsetY);
    if (!a) { tip.hidden = true; return; }
    show(tip, describe(a).filter((l) => l[0] !== "command").concat(a.command ? [["command", a.command.length > 300 ? a.command.slice(0, 300) + "…" : a.command]] : []));
    tip.hidden = false;
    tip.style.left = Math.min(e.offsetX + 14, canvas.clientWidth - 360) + "px";
    tip.style.top = (e.offsetY + 14) + "px";
  });
  canvas.addEventListener("mouseleave", () => { tip.hidden = true; });
  function zoom(factor, center) {
    const c = center == null ? (view.t0 + view.t1) / 2 : center;
    const span = Math.max(10, (view.t1 - view.t0) * factor);
    const k = (c - view.t0) / (view.t1 - view.t0);
    view = { t0: c - span * k, t1: c - span * k + span };
    draw();
  }
  canvas.addEventListener("wheel", (e) => { e.preventDefault(); zoom(e.deltaY > 0 ? 1.25 : 0.8, t(e.offsetX)); }, { passive: false });
  $("zoom-in").addEventListener("click", () => zoom(0.5));
  $("zoom-out").addEventListener("click", () => zoom(2));
  $("fit").addEventListener("click", () => { view = { t0: 0, t1: total * 1.02 }; draw(); });
  arrows.addEventListener("change", draw);
  window.addEventListener("resize", () => { size(); draw(); });

  // The table of nodes: the slowest first, at most LIST_LIMIT rows at once.
  const all = Array.from(nodes.values()).sort((a, b) => b.dur - a.dur || (a.node < b.node ? -1 : 1));
  const rowsByNode = new Map();
  const tbody = document.querySelector("#nodes tbody");
  function cell(tr, text, cls) { const td = document.createElement("td"); td.textContent = text; if (cls) td.className = cls; tr.appendChild(td); }
  function list() {
    const needle = $("filter").value.toLowerCase();
    const matching = needle ? all.filter((n) => n.node.toLowerCase().includes(needle)) : all;
    tbody.textContent = "";
    rowsByNode.clear();
    for (const n of matching.slice(0, LIST_LIMIT)) {
      const tr = document.createElement("tr");
      tr.className = "node" + (n.critical ? " critical" : "") + (selected && selected.node === n.node ? " selected" : "");
      cell(tr, n.node, "name"); cell(tr, n.q == null ? "" : data.queues[n.q].name);
      cell(tr, n.q == null ? "0" : String(n.attempts.length), "num");
      cell(tr, ms(n.dur), "num"); cell(tr, n.waited != null ? ms(n.waited * 1000) : "", "num");
      cell(tr, n.cpu != null ? ms(n.cpu * 1000) : "", "num"); cell(tr, bytes(n.rss), "num"); cell(tr, n.outcome);
      tr.title = n.node;
      tr.addEventListener("click", () => {
        const a = n.attempts[n.attempts.length - 1];
        const pad = Math.max(a.dur, total / 50);
        view = { t0: a.start - pad, t1: a.start + a.dur + pad };
        select(a);
      });
      rowsByNode.set(n.node, tr);
      tbody.appendChild(tr);
    }
    $("shown").textContent = matching.length > LIST_LIMIT
      ? "the slowest " + LIST_LIMIT + " of " + matching.length + " nodes; filter to find the others"
      : matching.length + " of " + all.length + " nodes, slowest first";
  }
  $("filter").addEventListener("input", list);
  list();
  size();
  draw();
  // trace.html#node=NAME opens with that node's details (a link to a node).
  try {
    const wanted = decodeURIComponent((location.hash.match(/^#node=(.*)$/) || [])[1] || "");
    if (nodes.has(wanted)) { const n = nodes.get(wanted); select(n.attempts[n.attempts.length - 1]); }
  } catch (e) { /* a malformed link opens the page as it is */ }
  document.body.setAttribute("data-rendered", String(A.length));
})();
</script>
</body>
</html>

"""#
}
