"use strict";
// The report page: reads the JSON the file embeds and renders rows as the reader scrolls.
// Rows are decoded a chunk at a time, on first use; nothing is fetched from anywhere.
var sessionctxReport = (function () {
  var head = null, images = [], turns = null, chunkCache = [], chunkEls = null, opaque = null;
  var MARK = "", firstOther = -1, unfolded = {};
  var visible = [], rendered = 0, searchText = [], allLoaded = false, waiting = null;
  var BATCH = 40, CHANGE_PAGE = 200, FOLD = 1200;
  var shownChanges = 0, filling = false;

  function $(id) { return document.getElementById(id); }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function readJSON(node) {
    try { return JSON.parse(node.textContent); } catch (err) { return undefined; }
  }

  // -- data -------------------------------------------------------------------------------
  function rowAt(i) {
    var size = head.meta.chunk, c = Math.floor(i / size);
    if (chunkCache[c] === undefined) {
      var node = chunkEls[c];
      if (!node) return null;  // not parsed by the browser yet
      var parsed = readJSON(node);
      chunkCache[c] = Array.isArray(parsed) ? parsed : false;
    }
    var chunk = chunkCache[c];
    if (chunk === false) return {s: "rows " + c * size + "+", k: "unreadable", sh: 0, cs: [],
      cx: [], st: null, why: "this part of the report could not be decoded"};
    return chunk[i - c * size];
  }
  function viewOf(row) {
    if (row.vw === "=") return row.st;
    if (row.vw === "message") return row.st && row.st.message;
    return row.vw;
  }
  function baseOf(row, ref) {
    var view = viewOf(row);
    if (ref === "=") return view;
    var msgs = view && view.messages;
    return Array.isArray(msgs) ? msgs[ref.p] : null;
  }
  function rowChanges(row) {
    return row.cs.map(function (c) { return head.changes[c]; });
  }
  function interesting(change) { return change.kind !== "skipped_metadata"; }
  // a change that needs a look: not the bookkeeping every session has
  function notable(change) { return !change.quiet && interesting(change); }
  function badgeClass(change) { return change.repair ? "repair" : change.quiet ? "quiet" : "adapted"; }
  // the page's own reference ([kind, ...]): an object whose one key is the page's marker,
  // a digest of the data no record can hold
  function ref(v) {
    if (!v || typeof v !== "object" || Array.isArray(v) || !MARK) return null;
    if (!Object.prototype.hasOwnProperty.call(v, MARK)) return null;
    var r = v[MARK];
    return Array.isArray(r) && Object.keys(v).length === 1 ? r : null;
  }
  function opaqueText(n) {
    if (opaque === null) opaque = readJSON($("sx-opaque")) || [];
    return typeof opaque[n] === "string" ? opaque[n] : "";
  }
  // base64 that decodes to UTF-8 text, as that text; else null
  function decoded(data) {
    try {
      var bin = atob(data.replace(/\s+/g, "")), bytes = new Uint8Array(bin.length);
      for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
      var text = new TextDecoder("utf-8", {fatal: true}).decode(bytes);
      return /[\x00-\x08\x0e-\x1f]/.test(text) ? null : text;
    } catch (err) { return null; }
  }

  // -- values -----------------------------------------------------------------------------
  function jsonText(value, found) {
    var text = JSON.stringify(value, function (key, v) {
      var r = ref(v);
      if (r && r[0] === "img") return "[image #" + Number(r[1]) + "]";
      if (r && r[0] === "blob") {
        if (found) found.push(r);
        return "[opaque data #" + Number(r[1]) + ": " + Number(r[2]) + " characters, " +
          String(r[3]) + "…]";
      }
      return v;
    }, 2);
    return text === undefined ? String(value) : text;
  }
  // each opaque value, revealed on demand, and decoded when it is text
  function revealInto(box, found) {
    found.forEach(function (r) {
      var d = el("details", "opaque");
      d.appendChild(el("summary", null, "reveal opaque data #" + Number(r[1]) + " (" + Number(r[2]) + " characters)"));
      d.addEventListener("toggle", function () {
        if (!d.open || d.childNodes.length > 1) return;
        var data = opaqueText(r[1]), text = decoded(data);
        if (text !== null) {
          d.appendChild(el("div", "who", "decoded from base64 (UTF-8 text):"));
          d.appendChild(el("pre", null, text));
        }
        d.appendChild(el("div", "who", "as stored:"));
        d.appendChild(el("pre", null, data));
      });
      box.appendChild(d);
    });
  }
  function jsonBox(value, label) {
    var found = [], box = el("div");
    box.appendChild(folded(jsonText(value, found), label));
    revealInto(box, found);
    return box;
  }
  function folded(text, label) {
    text = String(text);
    if (text.length <= FOLD) return el("pre", null, text);
    var d = el("details"), s = el("summary", null, label + " (" + text.length + " characters)");
    d.appendChild(s);
    d.addEventListener("toggle", function once() {
      if (d.open && d.childNodes.length === 1) d.appendChild(el("pre", null, text));
    });
    var p = el("pre", null, text.slice(0, 400) + "…");
    var box = el("div");
    box.appendChild(p);
    box.appendChild(d);
    return box;
  }
  function imageRef(block) {
    if (!block || typeof block !== "object") return null;
    var cands = [block.data, block.source && block.source.data, block.image_url,
      block.image_url && block.image_url.url, block.url, block.inlineData && block.inlineData.data];
    for (var i = 0; i < cands.length; i++) {
      var r = ref(cands[i]);
      if (r && r[0] === "img") return Number(r[1]);
    }
    return null;
  }
  function smallImage(block) {
    // an image too small to have been replaced by a thumbnail is shown as it is
    var src = block.source || {}, data = typeof block.data === "string" ? block.data : src.data;
    var mime = block.mimeType || block.mime_type || src.media_type || "image/png";
    if (typeof data === "string" && /^image\/[\w.+-]+$/.test(mime)) return {url: "data:" + mime + ";base64," + data};
    var url = typeof block.image_url === "string" ? block.image_url : block.image_url && block.image_url.url;
    if (typeof url === "string" && url.indexOf("data:image/") === 0) return {url: url};
    return null;
  }
  function imageEl(block, pruned) {
    var ref = imageRef(block), item = ref === null ? smallImage(block) : images[ref];
    var box = el("span", pruned ? "pruned" : "img");
    if (item && item.url) {
      var img = el("img", "thumb");
      img.src = item.url;
      img.alt = (pruned ? "pruned screenshot" : "image") + (item.w ? ", " + item.w + "×" + item.h : "");
      img.loading = "lazy";
      box.appendChild(img);
    } else {
      box.appendChild(el("span", "none", "[image" + (item && item.note ? ": " + item.note : "") + "]"));
    }
    if (pruned) box.appendChild(el("span", "label", "pruned"));
    return box;
  }
  function callEl(name, id, args) {
    var d = el("div", "call");
    d.appendChild(el("strong", null, "call " + (name || "?")));
    d.appendChild(document.createTextNode(" (" + (id || "no id") + ")"));
    if (args !== undefined) d.appendChild(typeof args === "string" ? folded(args, "arguments") : jsonBox(args, "arguments"));
    return d;
  }
  function blockEl(b) {
    var box = el("div", "blk");
    if (typeof b === "string") { box.appendChild(folded(b, "text")); return box; }
    if (!b || typeof b !== "object" || ref(b)) { box.appendChild(jsonBox(b, "value")); return box; }
    var t = b.type;
    if ((t === "text" || t === "input_text" || t === "output_text") && typeof b.text === "string") {
      box.appendChild(folded(b.text, "text"));
    } else if (t === "thinking" || t === "reasoning" || t === "redacted_thinking") {
      var d = el("details"), text = b.thinking || b.text || b.summary || "";
      d.appendChild(el("summary", null, "thinking (" + String(typeof text === "string" ? text.length : jsonText(text).length) + " characters)"));
      d.addEventListener("toggle", function () {
        if (d.open && d.childNodes.length === 1) d.appendChild(el("pre", null, typeof text === "string" ? text : jsonText(text)));
      });
      box.appendChild(d);
    } else if (t === "toolCall" || t === "tool_use" || t === "tool_call" || t === "function_call") {
      box.appendChild(callEl(b.name, b.id || b.call_id, b.arguments !== undefined ? b.arguments : b.input));
    } else if (t === "image" || t === "image_url" || t === "input_image") {
      box.appendChild(imageEl(b, false));
    } else if (t === "tool_result" && b.content !== undefined) {
      box.appendChild(el("div", "who", "result for " + (b.tool_use_id || "?")));
      contentInto(box, b.content);
    } else {
      box.appendChild(jsonBox(b, typeof t === "string" ? t : "block"));
    }
    return box;
  }
  function contentInto(box, content) {
    if (Array.isArray(content)) content.forEach(function (b) { box.appendChild(blockEl(b)); });
    else if (content !== undefined && content !== null) box.appendChild(blockEl(content));
  }
  function whoLine(m) {
    var who = String(m.role || m.type || "record");
    if (m.toolName) who += " · " + m.toolName;
    var rid = m.toolCallId || m.tool_call_id;
    if (rid) who += " · result for " + rid;
    if (m.isError) who += " · error";
    return el("div", "who", who);
  }
  function messageEl(m) {
    var box = el("div", "msg");
    if (!m || typeof m !== "object") { box.appendChild(blockEl(m)); return box; }
    box.appendChild(whoLine(m));
    if (m.role === "bashExecution") {
      box.appendChild(el("pre", null, "$ " + (m.command || "") + "\n" + (m.output || "")));
    } else if (m.role === "branchSummary" || m.role === "compactionSummary") {
      box.appendChild(folded(m.summary || "", "summary"));
    } else if (m.content !== undefined) {
      contentInto(box, m.content);
    } else {
      box.appendChild(jsonBox(m, "record"));
    }
    if (Array.isArray(m.tool_calls)) m.tool_calls.forEach(function (c) {
      var f = (c && c.function) || {};
      box.appendChild(callEl(f.name || c.name, c.id, f.arguments));
    });
    return box;
  }
  function diffInto(box, base, states, pruneAware) {
    states.forEach(function (s) {
      var op = s[0];
      if (op === "k") box.appendChild(blockEl(base[s[1]]));
      else if (op === "n") { var ins = el("ins", "added"); ins.appendChild(blockEl(s[1])); box.appendChild(ins); }
      else if (op === "x") {
        var del = el("del", "gone");
        del.appendChild(blockEl(base[s[1]]));
        box.appendChild(del);
        box.appendChild(el("span", "why", "removed — " + s[2]));
      } else if (op === "r") {
        var old = base[s[1]];
        box.appendChild(pruneAware && old && old.type === "image" ? imageEl(old, true) : blockEl(old));
        box.appendChild(blockEl(s[2]));
        box.appendChild(el("span", "why", "replaced — " + s[3]));
      }
    });
  }
  function diffedMessageEl(row, entry) {
    var base = baseOf(row, entry.base) || {};
    var box = el("div", "msg");
    box.appendChild(whoLine(base));
    if (entry.content) {
      if (Array.isArray(base.content)) diffInto(box, base.content, entry.content, true);
      else diffInto(box, [], entry.content, true);
    } else contentInto(box, base.content);
    if (entry.tool_calls) {
      var calls = Array.isArray(base.tool_calls) ? base.tool_calls : [];
      var wrapped = calls.map(function (c) { var f = (c && c.function) || {};
        return {type: "tool_call", name: f.name || c.name, id: c.id, arguments: f.arguments}; });
      diffInto(box, wrapped, entry.tool_calls, false);
    } else if (Array.isArray(base.tool_calls)) {
      base.tool_calls.forEach(function (c) { var f = (c && c.function) || {};
        box.appendChild(callEl(f.name || c.name, c.id, f.arguments)); });
    }
    return box;
  }

  // -- rows -------------------------------------------------------------------------------
  function preview(st) {
    var one = Array.isArray(st) ? st[0] : st, parts = [];
    if (one && typeof one === "object") {
      ["type", "kind", "role", "subtype", "uuid", "id", "timestamp"].forEach(function (k) {
        var v = one[k];
        if (typeof v === "string" || typeof v === "number") parts.push(k + ": " + v);
      });
      if (!parts.length) parts.push(Object.keys(one).slice(0, 6).join(", "));
    }
    return parts.join(" · ");
  }
  function storedCol(row) {
    var col = el("section", "col stored");
    col.setAttribute("aria-label", "Stored record, " + row.s);
    if (row.k === "unreadable") {
      col.appendChild(el("span", "notsent", "unreadable: " + (row.why || "")));
      return col;
    }
    var d = el("details"), st = row.st;
    var size = Array.isArray(st) ? st.length + " objects" : st && typeof st === "object" ?
      Object.keys(st).length + " fields" : "a value";
    d.appendChild(el("summary", null, "stored JSON (" + size + ")"));
    d.addEventListener("toggle", function () {
      if (d.open && d.childNodes.length === 1) d.appendChild(jsonBox(st, "stored JSON"));
    });
    col.appendChild(el("div", "preview", preview(st)));
    col.appendChild(d);
    if (row.why && row.k !== "unreadable") col.appendChild(el("span", "why", row.why));
    if (row.cp) {
      var cp = el("div", "cp");
      cp.appendChild(el("strong", null, "checkpoint"));
      cp.appendChild(document.createTextNode(" " + (row.cp.at || "") + checkpointFigures(row.cp)));
      cp.appendChild(el("div", null, row.cp.first));
      col.appendChild(cp);
    }
    return col;
  }
  function plural(n, one, many) { return n + " " + (n === 1 ? one : many); }
  // what a checkpoint holds; a figure it does not record is left out, not shown as 0
  function checkpointFigures(cp) {
    var out = "";
    if (cp.messages) out += " · holds " + plural(cp.messages, "message", "messages");
    var before = typeof cp.before === "number" && cp.before > 0,
      after = typeof cp.after === "number" && cp.after > 0;
    if (before) out += " · tokens " + cp.before + (after ? " → " + cp.after : " before");
    else if (after) out += " · gives " + cp.after + " tokens";
    return out;
  }
  function displayCol(row) {
    var col = el("section", "col display");
    col.setAttribute("aria-label", "What a person sees, " + row.s);
    if (!row.sh) { col.appendChild(el("span", "none", row.k === "unreadable" ? "nothing" : "not shown (" + row.k + ")")); return col; }
    col.appendChild(messageEl(row.dx !== undefined ? row.dx : viewOf(row)));
    return col;
  }
  function modelCol(row) {
    var col = el("section", "col model");
    col.setAttribute("aria-label", "What reaches the model, " + row.s);
    if (!row.cx.length) {
      var reasons = rowChanges(row);
      var repaired = reasons.some(function (c) { return c.repair; });
      col.appendChild(el("span", repaired ? "notsent" : "notsent quiet", "not sent"));
      if (row.sh && repaired) {
        var del = el("del", "gone");
        del.appendChild(messageEl(row.dx !== undefined ? row.dx : viewOf(row)));
        col.appendChild(del);
      }
      reasons.forEach(function (c) {
        col.appendChild(el("span", c.repair ? "why" : "why quiet", c.kind + ": " + c.reason));
      });
      if (!reasons.length) col.appendChild(el("span", "why quiet", row.why ||
        (row.sh ? "shown to a person only: it is no message a model reads" :
          "a " + row.k + " record: bookkeeping no model reads")));
      return col;
    }
    row.cx.forEach(function (entry) {
      var label = el("div", "who", "context message #" + entry.j);
      col.appendChild(label);
      if (entry.m !== undefined) col.appendChild(messageEl(baseOf(row, entry.m)));
      else if (entry["new"] !== undefined) col.appendChild(messageEl(entry["new"]));
      else col.appendChild(diffedMessageEl(row, entry));
    });
    return col;
  }
  function providerCol(row) {
    var col = el("section", "col provider");
    col.setAttribute("aria-label", "Provider body turn, " + row.s);
    var list = row.pv || [];
    if (!list.length) { col.appendChild(el("span", "none", "no turn")); return col; }
    if (turns === null) turns = readJSON($("sx-turns")) || [];
    list.forEach(function (t) {
      var turn = turns[t];
      if (!turn) return;
      col.appendChild(el("div", "who", head.meta.provider.name + " turn #" + t + " (" + turn.role + ")"));
      col.appendChild(jsonBox(turn.body, "turn"));
    });
    return col;
  }
  // a row whose rendering throws is shown as broken; the rows after it still render
  function rowEl(i) {
    try { return rowElOf(i); } catch (err) {
      var art = el("article", "row broken");
      art.id = "r" + i;
      art.tabIndex = -1;
      var h = el("h3", null, "record " + (i + 1) + " could not be shown");
      h.id = "r" + i + "-h";
      art.setAttribute("aria-labelledby", h.id);
      art.appendChild(h);
      art.appendChild(el("span", "why", "the page failed on this record (" + String(err && err.message || err) + "); its stored JSON:"));
      var raw = "";
      try { raw = JSON.stringify((rowAt(i) || {}).st, null, 2); } catch (e2) { raw = "(not printable)"; }
      art.appendChild(el("pre", null, raw));
      return art;
    }
  }
  function rowElOf(i) {
    var row = rowAt(i);
    if (!row) return null;
    var art = el("article", "row");
    art.id = "r" + i;
    art.tabIndex = -1;
    art.setAttribute("aria-labelledby", "r" + i + "-h");
    var h = el("h3");
    h.id = "r" + i + "-h";
    var a = el("a", null, row.s);
    a.href = "#r" + i;
    h.appendChild(a);
    h.appendChild(el("span", "tag", row.k + (row.r ? " · " + row.r : "")));
    var seen = {};
    if (row.pb) h.appendChild(el("span", "badge repair", "problem"));
    rowChanges(row).filter(interesting).forEach(function (c) {
      if (seen[c.kind]) return;
      seen[c.kind] = 1;
      h.appendChild(el("span", "badge " + badgeClass(c), c.kind));
    });
    art.appendChild(h);
    var cols = el("div", "cols");
    cols.appendChild(storedCol(row));
    cols.appendChild(displayCol(row));
    cols.appendChild(modelCol(row));
    if (head.meta.provider) cols.appendChild(providerCol(row));
    art.appendChild(cols);
    var changes = rowChanges(row).filter(interesting);
    if (changes.length && row.cx.length) {
      var ul = el("ul", "changes");
      ul.setAttribute("aria-label", "Changes to " + row.s);
      changes.forEach(function (c) {
        ul.appendChild(el("li", badgeClass(c), c.kind + ": " + c.reason));
      });
      art.appendChild(ul);
    }
    return art;
  }
  // how many rows from visible[k] on are one run of bookkeeping, next to each other in the file
  function quietRun(k) {
    var n = 0;
    while (k + n < visible.length) {
      var row = rowAt(visible[k + n]);
      if (!row || !row.q || (n && visible[k + n] !== visible[k + n - 1] + 1)) break;
      n++;
    }
    return n;
  }
  // a run of bookkeeping rows, as one line that opens them
  function foldEl(from, to) {
    var first = rowAt(visible[from]), last = rowAt(visible[to - 1]), kinds = {};
    for (var k = from; k < to; k++) {
      var row = rowAt(visible[k]), st = row && row.st, what = st && typeof st === "object" &&
        typeof st.type === "string" ? st.type : row ? row.k : "?";
      kinds[what] = (kinds[what] || 0) + 1;
    }
    var reason = rowChanges(first).filter(function (c) { return c.quiet; })[0];
    var box = el("div", "fold");
    box.id = "f" + visible[from];
    var text = first.s + "–" + last.s + ": " + (to - from) + " rows not sent (" + Object.keys(kinds).map(function (w) {
      return w + " ×" + kinds[w]; }).join(", ") + ")" + (reason ? " — " + reason.reason : "");
    var b = el("button", null, "show");
    b.type = "button";
    b.addEventListener("click", function () { unfold(visible[from]); });
    box.appendChild(el("span", null, text + " "));
    box.appendChild(b);
    return box;
  }
  function unfold(start) {
    unfolded[start] = 1;
    var node = $("f" + start), at = visible.indexOf(start);
    if (!node || at < 0) return;
    var frag = document.createDocumentFragment(), run = quietRun(at);
    for (var k = at; k < at + run; k++) {
      var r = rowEl(visible[k]);
      if (r) frag.appendChild(r);
    }
    node.replaceWith(frag);
  }
  function renderMore(count) {
    var list = $("list"), end = Math.min(visible.length, rendered + count);
    var frag = document.createDocumentFragment();
    while (rendered < end) {
      if (rendered === firstOther && firstOther > 0 && !$("divider")) {
        var divider = el("h3", "divider", "Every other record, in file order");
        divider.id = "divider";
        frag.appendChild(divider);
      }
      var run = unfolded[visible[rendered]] ? 0 : quietRun(rendered);
      if (run >= 2) {
        frag.appendChild(foldEl(rendered, rendered + run));
        rendered += run;
        end = Math.min(visible.length, end + run - 1);
        continue;
      }
      var node = rowEl(visible[rendered]);
      if (!node) break;  // its chunk is not parsed yet: loaded() resumes
      frag.appendChild(node);
      rendered++;
    }
    list.appendChild(frag);
    updateCount();
    if (rendered < visible.length && !filling) {
      filling = true;
      requestAnimationFrame(function () {
        filling = false;
        if ($("sentinel").getBoundingClientRect().top < window.innerHeight + 1200) renderMore(BATCH);
      });
    }
  }
  function updateCount() {
    $("count").textContent = "Showing " + rendered + " of " + visible.length + " record(s)" +
      (visible.length !== head.meta.rows ? " (" + head.meta.rows + " in all)" : "");
  }

  // -- filters ----------------------------------------------------------------------------
  function textOf(i) {
    if (searchText[i] === undefined) {
      var row = rowAt(i);
      searchText[i] = row ? (row.s + " " + JSON.stringify([row.st, row.vw, row.dx, row.why])).toLowerCase() : "";
    }
    return searchText[i];
  }
  function filtersActive() {
    return $("q").value.trim() !== "" || $("role").value !== "" || $("changed-only").checked ||
      checkedKinds().length > 0;
  }
  function checkedKinds() {
    return Array.prototype.slice.call(document.querySelectorAll("#kinds input:checked"))
      .map(function (x) { return x.value; });
  }
  function applyFilters() {
    if (!allLoaded && filtersActive()) { waiting = applyFilters; $("count").textContent = "Reading the rest of the report…"; return; }
    var q = $("q").value.trim().toLowerCase(), role = $("role").value;
    var changedOnly = $("changed-only").checked, kinds = checkedKinds();
    visible = [];
    for (var i = 0; i < head.meta.rows; i++) {
      if (role || changedOnly || kinds.length || q) {
        var row = rowAt(i);
        if (!row) continue;
        if (role && row.r !== role) continue;
        var cs = rowChanges(row);
        if (changedOnly && !cs.some(interesting)) continue;
        if (kinds.length && !cs.some(function (c) { return kinds.indexOf(c.kind) >= 0; })) continue;
        if (q && textOf(i).indexOf(q) < 0) continue;
      }
      visible.push(i);
    }
    problemsFirst();
    rendered = 0;
    $("list").textContent = "";
    renderMore(BATCH);
    renderChanges(true);
  }
  // the rows with a problem first, then every other row in file order
  function problemsFirst() {
    var rows = head.meta.problem_rows || [], mark = {}, first = [];
    rows.forEach(function (i) { mark[i] = 1; });
    var rest = visible.filter(function (i) { if (mark[i]) { first.push(i); return false; } return true; });
    firstOther = first.length;
    visible = first.concat(rest);
  }
  function clearFilters() {
    $("q").value = ""; $("role").value = ""; $("changed-only").checked = false;
    document.querySelectorAll("#kinds input").forEach(function (x) { x.checked = false; });
    applyFilters();
  }
  function goToRow(i) {
    if (i === null || i === undefined) return;
    var at = visible.indexOf(i);
    if (at < 0) { clearFilters(); at = visible.indexOf(i); if (at < 0) return; }
    if (at >= rendered) renderMore(at - rendered + BATCH);
    if (!$("r" + i)) {  // inside a folded run: open it
      for (var k = at; k >= 0; k--) if ($("f" + visible[k])) { unfold(visible[k]); break; }
    }
    var node = $("r" + i);
    if (node) { node.focus({preventScroll: true}); node.scrollIntoView({block: "start"}); }
  }

  // -- side panel -------------------------------------------------------------------------
  function link(text, row) {
    var a = el("a", null, text);
    a.href = row === null || row === undefined ? "#records" : "#r" + row;
    a.addEventListener("click", function (ev) { ev.preventDefault(); goToRow(row); });
    return a;
  }
  function renderChanges(reset) {
    var ul = $("change-list"), kinds = checkedKinds();
    if (reset) { ul.textContent = ""; shownChanges = 0; }
    var all = head.changes, added = 0;
    while (shownChanges < all.length && added < CHANGE_PAGE) {
      var c = all[shownChanges++];
      if (!interesting(c) || (kinds.length && kinds.indexOf(c.kind) < 0)) continue;
      var li = el("li", badgeClass(c));
      li.appendChild(link((c.s || "input") + " · " + c.kind, c.row));
      li.appendChild(document.createTextNode(": " + c.reason));
      ul.appendChild(li);
      added++;
    }
    $("more-changes").hidden = shownChanges >= all.length;
    if (!ul.childNodes.length) ul.appendChild(el("li", "none", "none"));
  }
  // the verdict, first thing on the page: ready, or what stands in the way
  function renderVerdict() {
    var m = head.meta, found = (m.provider && m.provider.violations) || [];
    var problems = (m.problems || 0) + found.length, pending = m.pending || 0;
    var box = $("verdict"), parts = [];
    if (problems) parts.push(plural(problems, "problem", "problems"));
    if (pending) parts.push(plural(pending, "pending call", "pending calls"));
    box.className = "verdict " + (parts.length ? "bad" : "ok");
    box.appendChild(el("strong", null, parts.length ? parts.join(" · ") : "Ready"));
    box.appendChild(document.createTextNode(parts.length ?
      (problems ? " before this session can be sent" + (m.provider ? " to " + m.provider.name : "") + " as stored; sessionctx build sends it repaired (the records below say how)." : "") +
      (pending ? " Check the real outcome of each pending call before retrying it." : "") :
      ": this session can be sent as stored" + (m.provider ? " to " + m.provider.name : "") + "; nothing is pending."));
    if ((m.problem_rows || []).length) {
      box.appendChild(document.createTextNode(" "));
      box.appendChild(link("First problem", m.problem_rows[0]));
    }
  }
  function renderHeader() {
    var m = head.meta;
    renderVerdict();
    $("title").textContent = "sessionctx report: " + m.label;
    $("summary").textContent = (m.format ? m.format + " session" : "session") +
      (m.provider ? " · built for " + m.provider.name + " / " + m.provider.model : "");
    var quiet = head.changes.filter(function (c) { return c.quiet; }).length;
    var figs = [["records", m.records], ["context messages", m.messages],
      ["tokens (estimated)", m.tokens_before + " → " + m.tokens_after],
      ["changes", head.changes.filter(notable).length], ["bookkeeping rows not sent", quiet],
      ["pending calls", m.pending], ["compactions", m.compactions.length]];
    figs.forEach(function (f) {
      var d = el("div");
      d.appendChild(el("dt", null, f[0]));
      d.appendChild(el("dd", null, f[1]));
      $("figures").appendChild(d);
    });
    var pl = $("pending-list");
    if (!head.pending.length) { pl.appendChild(el("li", "none", "none")); $("pending").querySelector(".warn").hidden = true; }
    head.pending.forEach(function (p) {
      var li = el("li");
      li.appendChild(link((p.name || "?") + " (" + (p.id || "no id") + ")", p.row));
      li.appendChild(document.createTextNode(" at " + p.s + ": " + jsonText(p.arguments).slice(0, 160)
        + (p.by ? " (its result was written by " + p.by + " itself, not by the tool)" : "")));
      pl.appendChild(li);
    });
    var tl = $("timeline");
    if (!m.compactions.length) tl.replaceWith(el("p", "none", "none"));
    m.compactions.forEach(function (c) {
      var li = el("li");
      li.appendChild(link(c.s + (c.at ? " · " + c.at : ""), c.row));
      li.appendChild(document.createTextNode(" · " + (c.applied ? "applied" : "ignored") +
        checkpointFigures(c) + " · " + c.first));
      tl.appendChild(li);
    });
    (m.roles || []).forEach(function (r) { var o = el("option", null, r); o.value = r; $("role").appendChild(o); });
    var kinds = $("kinds");
    Object.keys(m.kinds).forEach(function (k, n) {
      if (k === "skipped_metadata") return;
      var id = "kind-" + n, lab = el("label", "check"), box = el("input");
      box.type = "checkbox"; box.id = id; box.value = k;
      box.addEventListener("change", applyFilters);
      lab.htmlFor = id;
      lab.appendChild(box);
      lab.appendChild(document.createTextNode(k + " (" + m.kinds[k] + ")"));
      kinds.appendChild(lab);
    });
    var found = m.provider && m.provider.violations;
    if (found && found.length) {
      var box = $("violations");
      box.hidden = false;
      box.appendChild(el("strong", null, m.provider.name + " would refuse this body: " + found.length + " rule(s) broken"));
      var vl = el("ul");
      found.forEach(function (v) { vl.appendChild(el("li", null, v.path + ": " + v.message)); });
      box.appendChild(vl);
    }
    if (m.provider) {
      document.documentElement.style.setProperty("--cols", "4");
      $("colheads").appendChild(el("span", null, "Provider body (" + m.provider.name + ")"));
    }
  }
  function current() {
    var active = document.activeElement;
    if (active && active.classList && active.classList.contains("row")) return active;
    var rows = $("list").children;
    for (var i = 0; i < rows.length; i++) if (rows[i].getBoundingClientRect().bottom > 60) return rows[i];
    return null;
  }
  function step(dir, changedOnly) {
    var cur = current(), at = cur ? visible.indexOf(Number(cur.id.slice(1))) : -1;
    for (var k = at + dir; k >= 0 && k < visible.length; k += dir) {
      if (changedOnly) {
        var row = rowAt(visible[k]);
        if (!row || !(row.pb || rowChanges(row).some(notable))) continue;
      }
      goToRow(visible[k]);
      return;
    }
  }
  function onKey(ev) {
    var tag = ev.target && ev.target.tagName;
    if (ev.key === "Escape") { if (filtersActive()) clearFilters(); return; }
    if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA" || ev.metaKey || ev.ctrlKey || ev.altKey) return;
    if (ev.key === "j") step(1, false);
    else if (ev.key === "k") step(-1, false);
    else if (ev.key === "n") step(1, true);
    else if (ev.key === "p") step(-1, true);
    else if (ev.key === "/") { ev.preventDefault(); $("q").focus(); }
    else return;
  }

  // -- start ------------------------------------------------------------------------------
  function start() {
    head = readJSON($("sx-head"));
    MARK = head.meta.marker || "";
    images = readJSON($("sx-images")) || [];
    $("filters").addEventListener("submit", function (ev) { ev.preventDefault(); });
    chunkEls = document.getElementsByClassName("sx-rows");
    renderHeader();
    for (var i = 0; i < head.meta.rows; i++) visible.push(i);
    problemsFirst();
    renderMore(BATCH);
    renderChanges(true);
    performance.mark("sessionctx-first-render");  // the first rows are in the document
    // Element Timing reports when this text is painted (it must hold the text node itself)
    var first = $("list").querySelector("h3 a");
    if (first) first.setAttribute("elementtiming", "sessionctx-first-rows");
    var timer = null;
    $("q").addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(applyFilters, 200); });
    $("role").addEventListener("change", applyFilters);
    $("changed-only").addEventListener("change", applyFilters);
    $("clear").addEventListener("click", clearFilters);
    $("more-changes").addEventListener("click", function () { renderChanges(false); });
    document.addEventListener("keydown", onKey);
    if ("IntersectionObserver" in window) {
      new IntersectionObserver(function (entries) {
        if (entries.some(function (e) { return e.isIntersecting; })) renderMore(BATCH);
      }, {rootMargin: "1200px"}).observe($("sentinel"));
    }
  }
  function loaded() {
    allLoaded = true;
    document.documentElement.setAttribute("data-loaded", "1");
    if (waiting) { var w = waiting; waiting = null; w(); }
    else if (rendered < Math.min(visible.length, BATCH)) renderMore(BATCH);
  }
  return {start: start, loaded: loaded, goToRow: goToRow};
})();
