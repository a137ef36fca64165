"""The report's stylesheet and its one script, inlined into every page (no external files)."""

STYLE = """
:root { --fg:#1f2328; --muted:#656d76; --line:#d0d7de; --bg:#ffffff; --soft:#f6f8fa;
        --good:#1a7f37; --mid:#9a6700; --bad:#cf222e; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg);
       background: var(--bg); margin: 0 auto; padding: 16px 24px 48px; max-width: 1200px; }
h1 { font-size: 22px; margin: 8px 0 2px; } h2 { font-size: 18px; margin: 28px 0 8px; }
h3 { font-size: 15px; margin: 0 0 8px; } h4 { font-size: 13px; margin: 14px 0 6px; color: var(--muted); }
.muted { color: var(--muted); } .small { font-size: 12px; }
.runs { display: flex; flex-wrap: wrap; gap: 12px; }
.run-box { border: 1px solid var(--line); border-radius: 8px; padding: 10px 14px; flex: 1 1 360px; background: var(--soft); }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 0; }
dl.facts dt { color: var(--muted); } dl.facts dd { margin: 0; overflow-wrap: anywhere; }
.swatch { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 6px; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(380px, 1fr)); gap: 14px; }
.card { border: 1px solid var(--line); border-radius: 8px; padding: 12px 14px; }
.mean { margin-bottom: 6px; } .big { font-size: 22px; font-weight: 600; margin-right: 8px; }
.coverage { color: var(--muted); }
svg.chart { display: block; margin: 6px 0; width: 100%; max-width: 460px; height: auto; }
svg .axis { stroke: #8c959f; stroke-width: 1; } svg .tick { font-size: 10px; fill: var(--muted); }
.diff { border-top: 1px dashed var(--line); padding-top: 6px; margin-top: 6px; }
.verdict { font-weight: 600; }
ul.changes { margin: 2px 0; padding-left: 18px; font-size: 12px; }
details.problems { margin-top: 6px; font-size: 13px; } details.problems ul { margin: 4px 0; padding-left: 18px; }
span.error, .reason.error { color: var(--bad); } span.skipped, .reason.skipped { color: var(--mid); }
.controls { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; margin: 8px 0 10px; }
.controls input { flex: 1 1 260px; padding: 5px 8px; border: 1px solid var(--line); border-radius: 6px; }
.controls select, .controls button { padding: 4px 8px; border: 1px solid var(--line); border-radius: 6px; background: var(--soft); }
details.row { border: 1px solid var(--line); border-radius: 6px; margin: 4px 0; }
details.row > summary { cursor: pointer; padding: 6px 10px; display: flex; gap: 10px; align-items: center; list-style: none; }
details.row > summary::-webkit-details-marker { display: none; }
details.row[open] > summary { background: var(--soft); border-bottom: 1px solid var(--line); }
.key { font-weight: 600; white-space: nowrap; } .snippet { flex: 1; color: var(--muted); overflow: hidden;
  white-space: nowrap; text-overflow: ellipsis; } .chips { display: flex; gap: 4px; flex-wrap: wrap; }
.chip { display: inline-block; min-width: 34px; text-align: center; padding: 0 6px; border-radius: 10px;
  font-size: 12px; border: 1px solid var(--line); background: #fff; }
.chip.good { background: #dafbe1; border-color: #aceebb; } .chip.mid { background: #fff8c5; border-color: #f2e085; }
.chip.bad { background: #ffebe9; border-color: #ffcecb; } .chip.error { background: var(--bad); color: #fff; }
.chip.skipped, .chip.missing { background: #eaeef2; color: var(--muted); }
.row-body { padding: 4px 12px 12px; }
dl.kv { display: grid; grid-template-columns: max-content 1fr; gap: 4px 12px; margin: 0; }
dl.kv dt { font-weight: 600; color: var(--muted); } dl.kv dd { margin: 0; min-width: 0; }
.text { white-space: pre-wrap; overflow-wrap: anywhere; }
ol.texts { margin: 0; padding-left: 20px; } ol.texts li { margin-bottom: 4px; }
pre.json { background: var(--soft); padding: 6px 8px; border-radius: 4px; overflow-x: auto; margin: 0;
  white-space: pre-wrap; overflow-wrap: anywhere; }
.conversation .msg { border-left: 3px solid var(--line); padding: 2px 8px; margin: 4px 0; }
.msg.user { border-color: #3566c9; } .msg.assistant { border-color: #2f9a5a; } .msg.tool { border-color: #e07b39; }
.role { font-size: 11px; text-transform: uppercase; color: var(--muted); } .call { font-family: ui-monospace, monospace; font-size: 12px; }
table.cells { border-collapse: collapse; width: 100%; } table.cells th { text-align: left; vertical-align: top;
  padding: 6px 10px 6px 0; white-space: nowrap; width: 1%; } table.cells td { padding: 6px 0; border-top: 1px solid var(--soft); }
.reason { margin: 2px 0; } .run-name { font-size: 12px; font-weight: 600; }
table.details { border-collapse: collapse; font-size: 12px; margin: 4px 0; }
table.details th, table.details td { border: 1px solid var(--line); padding: 2px 6px; text-align: left; vertical-align: top; }
td.yes { color: var(--good); font-weight: 600; } td.no { color: var(--bad); font-weight: 600; }
.hidden { display: none; }
section.alignment table { border-collapse: collapse; margin: 6px 0 16px; font-size: 13px; }
section.alignment th, section.alignment td { border: 1px solid var(--line); padding: 3px 8px; text-align: right; }
section.alignment th:first-child, section.alignment td:first-child { text-align: left; }
section.alignment small { color: var(--muted); }
section.alignment .figures { display: flex; flex-wrap: wrap; gap: 24px; align-items: flex-start; }
section.alignment figure { margin: 0; }
section.alignment figcaption { font-size: 12px; color: var(--muted); max-width: 330px; margin-bottom: 4px; }
section.alignment .worst td, section.alignment .worst th { text-align: left; vertical-align: top; max-width: 28rem; overflow-wrap: anywhere; }
"""

SCRIPT = """
(function () {
  var list = document.getElementById('rows');
  if (!list) { return; }
  var rows = Array.prototype.slice.call(list.querySelectorAll('details.row'));
  var filter = document.getElementById('filter'), only = document.getElementById('only');
  var sort = document.getElementById('sort'), shown = document.getElementById('shown');
  function apply() {
    var text = filter.value.toLowerCase(), flag = only.value, count = 0;
    rows.forEach(function (row) {
      var visible = (!text || row.textContent.toLowerCase().indexOf(text) >= 0) &&
                    (!flag || (' ' + row.getAttribute('data-flags') + ' ').indexOf(' ' + flag + ' ') >= 0);
      row.classList.toggle('hidden', !visible);
      if (visible) { count += 1; }
    });
    shown.textContent = count + ' of ' + rows.length + ' rows shown';
  }
  function order() {
    var key = sort.value, sorted = rows.slice();
    if (key !== '') {
      sorted.sort(function (a, b) {
        var x = a.getAttribute('data-s' + key), y = b.getAttribute('data-s' + key);
        if (x === '' && y === '') { return 0; } if (x === '') { return 1; } if (y === '') { return -1; }
        return parseFloat(x) - parseFloat(y);
      });
    }
    sorted.forEach(function (row) { list.appendChild(row); });
  }
  filter.addEventListener('input', apply);
  only.addEventListener('change', apply);
  sort.addEventListener('change', order);
  document.getElementById('expand').addEventListener('click', function () {
    rows.forEach(function (row) { if (!row.classList.contains('hidden')) { row.open = true; } });
  });
  document.getElementById('collapse').addEventListener('click', function () {
    rows.forEach(function (row) { row.open = false; });
  });
  apply();
})();
"""

__all__ = ["SCRIPT", "STYLE"]
