"use strict";
(function () {
  var body = document.querySelector("#items");
  var items = Array.prototype.slice.call(document.querySelectorAll("#items tbody.item"));
  var f = {
    behavior: document.getElementById("f-behavior"),
    build: document.getElementById("f-build"),
    device: document.getElementById("f-device"),
    status: document.getElementById("f-status"),
    q: document.getElementById("f-q")
  };
  var failing = { fail: true, error: true, xpass: true };
  function apply() {
    var shown = 0, q = f.q.value.trim().toLowerCase();
    items.forEach(function (it) {
      var d = it.dataset;
      var ok = (!f.behavior.value || d.behavior === f.behavior.value) &&
        (!f.build.value || d.build === f.build.value) &&
        (!f.device.value || d.device === f.device.value) &&
        (!f.status.value || (f.status.value === "failing" ? failing[d.status] === true : d.status === f.status.value)) &&
        (!q || d["case"].toLowerCase().indexOf(q) >= 0 || d.variant.toLowerCase().indexOf(q) >= 0);
      it.hidden = !ok;
      if (ok) { shown += 1; }
    });
    document.getElementById("count").textContent = shown + " of " + items.length + " items";
  }
  ["behavior", "build", "device", "status"].forEach(function (k) { f[k].addEventListener("change", apply); });
  f.q.addEventListener("input", apply);
  document.getElementById("filters").addEventListener("reset", function () { setTimeout(apply, 0); });
  document.querySelectorAll("#items button.sort").forEach(function (button) {
    button.addEventListener("click", function () {
      var key = button.dataset.key, dir = button.dataset.dir === "asc" ? -1 : 1;
      document.querySelectorAll("#items button.sort").forEach(function (b) { delete b.dataset.dir; });
      button.dataset.dir = dir === 1 ? "asc" : "desc";
      items.sort(function (a, b) {
        var x = a.dataset[key], y = b.dataset[key];
        var c = key === "time" ? parseFloat(x) - parseFloat(y) : (x < y ? -1 : (x > y ? 1 : 0));
        return c * dir;
      });
      items.forEach(function (it) { body.appendChild(it); });
    });
  });
  body.addEventListener("click", function (ev) {
    var t = ev.target;
    if (t instanceof HTMLButtonElement && t.classList.contains("toggle")) {
      var detail = t.closest("tbody").querySelector("tr.detail");
      detail.hidden = !detail.hidden;
      t.setAttribute("aria-expanded", String(!detail.hidden));
    }
  });
  function pick(cell) {
    f.behavior.value = cell.dataset.behavior;
    f.build.value = cell.dataset.build;
    f.device.value = cell.dataset.device;
    f.status.value = "";
    f.q.value = "";
    apply();
    document.getElementById("items-section").scrollIntoView();
  }
  document.querySelectorAll("#matrix td.cell[data-build]").forEach(function (cell) {
    cell.addEventListener("click", function () { pick(cell); });
    cell.addEventListener("keydown", function (ev) { if (ev.key === "Enter") { pick(cell); } });
  });
  apply();
}());
