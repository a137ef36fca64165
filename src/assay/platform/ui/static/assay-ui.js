// The web UI's own script (no inline script anywhere: the Content-Security-Policy forbids it).
// - the reviewer's keyboard: 1-5, y/n, Enter, s, e, ? on the review item page; no shortcut
//   fires while the focus is in a text field (Esc leaves the field);
// - forms with data-confirm ask before they are sent;
// - the comparison chart, drawn from the JSON block #chart-data when Chart.js is loaded;
// - the criterion form shows only the fields of the chosen type and output (data-types,
//   data-outputs); without this script it shows them all, each group naming its type.
(function () {
  "use strict";

  function isTyping(target) {
    if (!target || !target.closest) return false;
    if (target.isContentEditable) return true;
    var field = target.closest("textarea, select, input");
    if (!field) return false;
    if (field.tagName !== "INPUT") return true;
    var type = (field.getAttribute("type") || "text").toLowerCase();
    return ["radio", "checkbox", "button", "submit", "reset"].indexOf(type) < 0;
  }

  // The criterion a key answers: the fieldset holding the focus if it is of that kind, else the
  // first of that kind without an answer, else the first of that kind.
  function targetFieldset(form, kind) {
    var active = document.activeElement && document.activeElement.closest
      ? document.activeElement.closest("fieldset[data-kind='" + kind + "']") : null;
    if (active) return active;
    var all = form.querySelectorAll("fieldset[data-kind='" + kind + "']");
    for (var i = 0; i < all.length; i++) {
      if (!all[i].querySelector("input:checked")) return all[i];
    }
    return all.length ? all[0] : null;
  }

  function choose(form, kind, value) {
    var fieldset = targetFieldset(form, kind);
    if (!fieldset) return false;
    var input = fieldset.querySelector("input[type=radio][value='" + value + "']");
    if (!input) return false;
    input.checked = true;
    input.dispatchEvent(new Event("change", { bubbles: true }));
    return true;
  }

  function toggleHelp() {
    var help = document.getElementById("help");
    if (!help) return;
    if (help.open) help.close(); else help.showModal();
  }

  function editOutput() {
    var details = document.getElementById("edit-output");
    if (!details) return;
    details.open = true;
    var text = document.getElementById("output-text");
    if (text) text.focus();
  }

  document.addEventListener("keydown", function (event) {
    var form = document.getElementById("review-form");
    if (!form || event.ctrlKey || event.metaKey || event.altKey || event.isComposing) return;
    if (isTyping(event.target)) {
      if (event.key === "Escape") event.target.blur();
      return;
    }
    var help = document.getElementById("help");
    if (help && help.open && event.key !== "?") return; // the dialog handles its own keys
    var key = event.key;
    var handled = true;
    if (key >= "1" && key <= "5") handled = choose(form, "likert", key);
    else if (key === "y") handled = choose(form, "bool", "yes");
    else if (key === "n") handled = choose(form, "bool", "no");
    else if (key === "Enter") {
      var submit = document.getElementById("submit-labels");
      if (submit && !submit.disabled) form.requestSubmit(submit);
    } else if (key === "s") {
      var skip = document.getElementById("skip-form");
      if (skip) skip.requestSubmit();
    } else if (key === "e") editOutput();
    else if (key === "?") toggleHelp();
    else handled = false;
    if (handled) event.preventDefault();
  });

  document.addEventListener("click", function (event) {
    if (event.target.closest && event.target.closest("[data-help-open]")) toggleHelp();
  });

  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (form.dataset && form.dataset.confirm && !window.confirm(form.dataset.confirm)) {
      event.preventDefault();
    }
  });

  function drawChart() {
    var block = document.getElementById("chart-data");
    var canvas = document.getElementById("chart");
    if (!block || !canvas || typeof window.Chart === "undefined") return;
    var data = JSON.parse(block.textContent);
    var colours = ["#3461c1", "#d9822b", "#2e9e6a", "#a23b72", "#6b6b6b", "#c2b51e"];
    data.datasets.forEach(function (set, i) { set.backgroundColor = colours[i % colours.length]; });
    new window.Chart(canvas, {
      type: "bar",
      data: data,
      options: {
        animation: false,
        responsive: false,
        scales: { y: { beginAtZero: true } },
        plugins: { legend: { position: "bottom" } }
      }
    });
  }

  function showCriterionFields() {
    var form = document.querySelector("form[data-criterion-form]");
    if (!form) return;
    var type = form.elements.criteria_type.value;
    var output = form.elements.output_type.value; // "" (default): every output's fields
    form.querySelectorAll("[data-types]").forEach(function (group) {
      var types = group.dataset.types.split(" ");
      var outputs = group.dataset.outputs ? group.dataset.outputs.split(" ") : null;
      var wanted = types.indexOf(type) >= 0 &&
        (!outputs || !output || outputs.indexOf(output) >= 0);
      group.hidden = !wanted;
    });
  }

  document.addEventListener("change", function (event) {
    var field = event.target;
    if (field.closest && field.closest("form[data-criterion-form]") &&
        (field.name === "criteria_type" || field.name === "output_type")) showCriterionFields();
  });

  function ready() {
    drawChart();
    showCriterionFields();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", ready);
  else ready();
})();
