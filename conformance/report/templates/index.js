"use strict";
(function () {
  // Everything long is rendered from the page's data on demand (text only: no HTML from the data),
  // so that the first paint holds a few thousand nodes whatever the number of records.
  var data = JSON.parse(document.getElementById("data").textContent);
  var PAGE = 100, TIMELINE_PAGE = 60;
  // shared values are kept once in the data and named by index (conformance/report/html.py, _Tables)
  // and items have short keys (html.py, _item)
  data.items = data.items.map(function (x) {
    var b = data.builds[x.b], meta = data.cases[x.m];
    var knowns = x.k.map(function (i) { var k = data.knowns[i]; return { source: k[0], reason: k[1], link: k[2], kind: k[3] }; });
    var it = { "case": x.c, variant: x.v, behavior: x.h, build: b[0], buildLabel: b[1], device: x.d, status: x.s,
      time: x.t, summary: meta[0], caseFile: meta[1], reason: x.r, mismatches: x.x, more: x.n, link: x.l,
      compiles: x.cc, calls: x.ca, source: data.sources[x.so[0]] + (x.so[1] ? ":" + x.so[1] : ""), causes: x.cu,
      knowns: knowns,
      probes: x.p || [], probeError: x.pe || "", seen: x.se || [], warnings: x.w || [] };
    it.id = "item-" + (it.build + "--" + it["case"] + "--" + it.variant).replace(/[^A-Za-z0-9_.-]+/g, "-");
    return it;
  });
  var failing = { fail: true, error: true, xpass: true };

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (k === "text") { node.textContent = attrs[k]; } else if (k === "hidden") { node.hidden = attrs[k]; }
      else { node.setAttribute(k, attrs[k]); }
    });
    (children || []).forEach(function (c) { if (c !== null) { node.appendChild(typeof c === "string" ? document.createTextNode(c) : c); } });
    return node;
  }
  function link(href, text) { return el("a", { href: href, text: text }); }

  // ---------------------------------------------------------------- the long lists, on opening
  document.querySelectorAll("details.long").forEach(function (d) {
    d.addEventListener("toggle", function () {
      var ul = d.querySelector("ul");
      if (d.open && !ul.childElementCount) {
        data[d.dataset.list].forEach(function (line) { ul.appendChild(el("li", { text: line })); });
      }
    });
  });

  // ---------------------------------------------------------------- the timeline
  var tl = document.getElementById("timeline-rows");
  var tlMore = document.getElementById("timeline-more");
  var tlShown = 0;
  function timelineMore(n) {
    data.timeline.slice(tlShown, tlShown + n).forEach(function (r) {
      var tr = el("tr", {}, [el("td", {}, [el("code", { text: r[0] }), " [" + r[1] + "]"])]);
      r[2].forEach(function (st) { tr.appendChild(el("td", { "class": "status s-" + (st || "none"), text: st || "—" })); });
      tr.appendChild(el("td", { text: r[3] }));
      tr.appendChild(el("td", { text: r[4] }));
      tr.appendChild(el("td", { text: r[5].length ? r[5].join(" ") : "—" }));
      tl.appendChild(tr);
    });
    tlShown = Math.min(tlShown + n, data.timeline.length);
    tlMore.hidden = tlShown >= data.timeline.length;
    tlMore.textContent = "show " + Math.min(TIMELINE_PAGE, data.timeline.length - tlShown) + " more of " +
      (data.timeline.length - tlShown) + " rows";
  }
  if (tl) {
    tlMore.addEventListener("click", function () { timelineMore(TIMELINE_PAGE); });
    timelineMore(TIMELINE_PAGE);
  }

  // ---------------------------------------------------------------- the items
  var table = document.getElementById("items");
  var more = document.getElementById("items-more");
  var f = {
    behavior: document.getElementById("f-behavior"),
    build: document.getElementById("f-build"),
    device: document.getElementById("f-device"),
    status: document.getElementById("f-status"),
    q: document.getElementById("f-q"),
    cause: document.getElementById("f-cause")
  };
  var order = data.items.slice();
  var matching = [], shown = 0;

  function text(it) {
    return (it.case + " " + it.variant + " " + it.mismatches.map(function (m) { return m[0] + " " + m[1]; }).join(" ") +
      " " + it.knowns.map(function (k) { return k.reason; }).join(" ") + " " + it.reason).toLowerCase();
  }
  function matches(it, q) {
    return (!f.behavior.value || it.behavior === f.behavior.value) &&
      (!f.build.value || it.build === f.build.value) &&
      (!f.device.value || it.device === f.device.value) &&
      (!f.status.value || (f.status.value === "failing" ? failing[it.status] === true : it.status === f.status.value)) &&
      (!f.cause.value || it.causes.indexOf(f.cause.value) >= 0) &&
      (!q || text(it).indexOf(q) >= 0);
  }

  function detail(it) {
    var td = el("td", { colspan: "8" });
    if (it.reason) { td.appendChild(el("p", { "class": "reason", text: it.reason })); }
    it.knowns.forEach(function (k, i) {
      td.appendChild(el("p", {}, ["Known failure " + (i + 1) + " (" + k.kind + ", " + k.source + "): " + k.reason + " — ",
        link(k.link, k.link)]));
    });
    if (it.mismatches.length) {
      td.appendChild(el("h4", { text: "Mismatches (" + (it.mismatches.length + it.more) + ")" }));
      var body = el("tbody");
      it.mismatches.forEach(function (m) {
        var k = m[6] >= 0 ? it.knowns[m[6]] : null;
        body.appendChild(el("tr", {}, [el("td", { text: m[0] }), el("td", { text: m[1] }),
          el("td", {}, [el("code", { text: m[2] })]), el("td", {}, [el("code", { text: m[3] }), " (" + m[4] + ")"]),
          el("td", { text: m[5] }), el("td", { text: k ? "known failure " + (m[6] + 1) + ": " + k.kind : "none" })]));
      });
      td.appendChild(el("table", { "class": "mismatches" }, [el("thead", {}, [el("tr", {}, ["where", "check", "compiled",
        "eager (or source)", "detail", "covered by"].map(function (h) { return el("th", { text: h }); }))]), body]));
      if (it.more) { td.appendChild(el("p", { "class": "facts", text: "… " + it.more + " more in the records file" })); }
    }
    var facts = el("p", { "class": "facts" });
    if (it.link) { facts.appendChild(el("a", { "class": "repro", href: it.link, text: "reproducer" })); facts.appendChild(document.createTextNode(" · ")); }
    it.causes.forEach(function (c, i) {
      facts.appendChild(link("#" + c, it.causes.length > 1 ? "cause " + (i + 1) : "its cause"));
      facts.appendChild(document.createTextNode(" · "));
    });
    if (it.caseFile) { facts.appendChild(document.createTextNode("case file ")); facts.appendChild(el("code", { text: it.caseFile })); facts.appendChild(document.createTextNode(" · ")); }
    facts.appendChild(document.createTextNode("compiles: " + (it.compiles || "—") + " · calls: " + it.calls + " · from "));
    facts.appendChild(el("code", { text: it.source }));
    td.appendChild(facts);
    if (it.probeError) { td.appendChild(el("p", { "class": "bad", text: "internals probe error: " + it.probeError })); }
    if (it.probes.length) {
      td.appendChild(el("h4", { text: "Internals probes" }));
      var ul = el("ul", { "class": "probes" });
      it.probes.forEach(function (p) {
        var li = el("li", {}, [el("span", { "class": "probe p-" + p.status, text: p.status }), " " + p.behavior + (p.note ? " — " + p.note : "")]);
        if (p.diff) { li.appendChild(el("pre", { "class": "diff", text: p.diff })); }
        if (p.sources) {
          li.appendChild(el("div", { "class": "sources" }, [
            el("figure", {}, [el("figcaption", { text: "build" }), el("pre", { text: p.sources[0] })]),
            el("figure", {}, [el("figcaption", { text: "reference" }), el("pre", { text: p.sources[1] })])]));
        }
        ul.appendChild(li);
      });
      td.appendChild(ul);
      if (it.seen.length) { td.appendChild(el("p", { "class": "facts", text: "generated-code artifacts seen: " + it.seen.join(", ") })); }
    }
    if (it.warnings.length) {
      td.appendChild(el("h4", { text: "Warnings from the build" }));
      td.appendChild(el("ul", {}, it.warnings.map(function (w) { return el("li", {}, [el("code", { text: w })]); })));
    }
    return el("tr", { "class": "detail" }, [td]);
  }

  function row(it) {
    var toggle = el("button", { type: "button", "class": "toggle", "aria-expanded": "false", text: "details" });
    var tbody = el("tbody", { "class": "item", id: it.id, "data-case": it.case, "data-variant": it.variant,
      "data-behavior": it.behavior, "data-build": it.build, "data-device": it.device, "data-status": it.status,
      "data-time": it.time }, [el("tr", { "class": "row" }, [
        el("td", {}, [el("code", { text: it.case }), el("div", { "class": "summary", text: it.summary })]),
        el("td", { text: it.variant }), el("td", { text: it.behavior }), el("td", { text: it.buildLabel }),
        el("td", { text: it.device }), el("td", {}, [el("span", { "class": "status s-" + it.status, text: it.status })]),
        el("td", { "class": "num", text: it.time }), el("td", {}, [toggle])])]);
    toggle.addEventListener("click", function () { open(tbody, it, tbody.querySelector("tr.detail") === null || tbody.querySelector("tr.detail").hidden); });
    return tbody;
  }
  function open(tbody, it, show) {
    var d = tbody.querySelector("tr.detail");
    if (d === null) { d = detail(it); d.hidden = true; tbody.appendChild(d); }
    d.hidden = !show;
    tbody.querySelector("button.toggle").setAttribute("aria-expanded", String(show));
  }

  function render() {
    table.querySelectorAll("tbody.item").forEach(function (t) { t.remove(); });
    shown = 0;
    page(PAGE);
  }
  function page(n) {
    matching.slice(shown, shown + n).forEach(function (it) { table.appendChild(row(it)); });
    shown = Math.min(shown + n, matching.length);
    more.hidden = shown >= matching.length;
    more.textContent = "show " + Math.min(PAGE, matching.length - shown) + " more of " + (matching.length - shown);
  }
  more.addEventListener("click", function () { page(PAGE); });

  // an empty selection says so, and by which filters: an empty table alone reads as a page that failed
  function emptyText() {
    var by = [];
    ["behavior", "build", "device", "status"].forEach(function (k) {
      if (f[k].value) { by.push(k + " " + f[k].options[f[k].selectedIndex].text); }
    });
    if (f.q.value.trim()) { by.push("search \u201c" + f.q.value.trim() + "\u201d"); }
    if (f.cause.value) { by.push("one cause"); }
    var text = "No item matches " + (by.length ? by.join(", ") : "these filters") + ".";
    if (f.status.value === "failing") { text += " Nothing fails untriaged and no known failure passes here."; }
    if (data.items.length < data.total) {
      text += " This page lists " + data.items.length + " of " + data.total +
        " items (the notable ones); every record is in compat.json.gz.";
    }
    return text + " Clear the filters to see every item listed.";
  }

  var writing = false;
  function apply(keepHash) {
    var q = f.q.value.trim().toLowerCase();
    matching = order.filter(function (it) { return matches(it, q); });
    document.getElementById("count").textContent = matching.length + " of " + data.items.length + " items";
    var empty = document.getElementById("items-empty");
    empty.hidden = matching.length > 0;
    empty.textContent = matching.length ? "" : emptyText();
    var note = document.getElementById("cause-filter");
    note.hidden = !f.cause.value;
    note.textContent = f.cause.value ? "Only the items of one cause (" + f.cause.value + "); clear to see all." : "";
    render();
    if (!keepHash) {
      var params = [];
      ["behavior", "build", "device", "status", "q", "cause"].forEach(function (k) {
        if (f[k].value) { params.push(k + "=" + encodeURIComponent(f[k].value)); }
      });
      writing = true;
      history.replaceState(null, "", params.length ? "#items?" + params.join("&") : location.pathname + location.search);
      writing = false;
    }
  }
  ["behavior", "build", "device", "status"].forEach(function (k) { f[k].addEventListener("change", function () { apply(false); }); });
  f.q.addEventListener("input", function () { apply(false); });
  document.getElementById("filters").addEventListener("reset", function () { setTimeout(function () { f.cause.value = ""; apply(false); }, 0); });
  document.querySelectorAll("#items button.sort").forEach(function (button) {
    button.addEventListener("click", function () {
      var key = button.dataset.key, dir = button.dataset.dir === "asc" ? -1 : 1;
      document.querySelectorAll("#items button.sort").forEach(function (b) { delete b.dataset.dir; });
      button.dataset.dir = dir === 1 ? "asc" : "desc";
      var field = key === "case" ? "case" : key;
      order.sort(function (a, b) {
        var x = a[field], y = b[field];
        var c = key === "time" ? parseFloat(x) - parseFloat(y) : (x < y ? -1 : (x > y ? 1 : 0));
        return c * dir;
      });
      apply(true);
    });
  });

  // a target inside a folded list is unfolded first
  function reveal(node) {
    for (var p = node.parentElement; p; p = p.parentElement) { if (p.tagName === "DETAILS") { p.open = true; } }
  }
  function fromHash() {
    var h = decodeURIComponent(location.hash.slice(1));
    var target = h && document.getElementById(h);
    if (target && h.indexOf("item-") !== 0) { reveal(target); target.scrollIntoView(); return; }
    if (h.indexOf("items?") === 0) {
      var params = {};
      h.slice(6).split("&").forEach(function (kv) { var i = kv.indexOf("="); if (i > 0) { params[kv.slice(0, i)] = kv.slice(i + 1); } });
      ["behavior", "build", "device", "status", "q", "cause"].forEach(function (k) { f[k].value = params[k] || ""; });
      apply(true);
      document.getElementById("items-section").scrollIntoView();
      return;
    }
    if (h.indexOf("item-") === 0) {
      var it = data.items.filter(function (x) { return x.id === h; })[0];
      if (!it) { return; }
      ["behavior", "build", "device", "status", "cause"].forEach(function (k) { f[k].value = ""; });
      f.build.value = it.build;
      f.q.value = it.case + " " + it.variant;
      matching = [it];
      apply(true);
      var tbody = document.getElementById(h);
      if (tbody) { open(tbody, it, true); tbody.scrollIntoView(); }
    }
  }
  window.addEventListener("hashchange", function () { if (!writing) { fromHash(); } });

  function pick(cell) {
    f.behavior.value = cell.dataset.behavior;
    f.build.value = cell.dataset.build;
    f.device.value = cell.dataset.device;
    f.status.value = "";
    f.q.value = "";
    f.cause.value = "";
    apply(false);
    document.getElementById("items-section").scrollIntoView();
  }
  document.querySelectorAll("#matrix td.cell[data-build]").forEach(function (cell) {
    cell.addEventListener("click", function () { pick(cell); });
    cell.addEventListener("keydown", function (ev) { if (ev.key === "Enter") { pick(cell); } });
  });
  apply(true);
  if (location.hash) { fromHash(); }
}());
