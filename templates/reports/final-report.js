(function () {
  "use strict";
  var dataEl = document.getElementById("okstra-export-data");
  var form = document.getElementById("user-response");
  if (!dataEl || !form) { return; }
  var cfg = JSON.parse(dataEl.textContent);
  // The whitespace Python's str.rstrip() removes, exactly (JS trimEnd differs on a few characters).
  var TRAILING_WS = /[\t\n\u000b\f\r\u001c-\u001f \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+$/;
  var NO_ANSWER = "_(no answer)_";

  // Same rule as okstra_core.workflows.user_response.normalise_answer.
  function normalise(text) {
    var lines = text.replace(/\r\n/g, "\n").replace(/\r/g, "\n").split("\n").map(function (line) {
      return line.replace(TRAILING_WS, "");
    });
    while (lines.length && !lines[0]) { lines.shift(); }
    while (lines.length && !lines[lines.length - 1]) { lines.pop(); }
    return lines.length ? lines.join("\n") : NO_ANSWER;
  }

  function selectedOption() {
    var checked = document.querySelector('input[name="selected-option"]:checked');
    return checked ? checked.value : null;
  }

  // Same assembly as okstra_core.workflows.user_response.render_body; the header is pre-rendered by Python.
  function sidecarText() {
    var selected = cfg.mode === "comparison" ? selectedOption() : null;
    var header = cfg.mode === "comparison" ? cfg.headers[selected] : cfg.headers[""];
    var out = [cfg.titleLine, ""];
    if (cfg.mode === "comparison" && selected) { out.push("## Selected option", "", selected, ""); }
    cfg.items.forEach(function (item) {
      var field = document.getElementById("answer-" + item.id);
      out.push("## " + item.id, "", item.quote, "", normalise(field ? field.value : ""), "");
    });
    return header + out.join("\n");
  }

  var status = document.getElementById("export-status");
  function say(text, isError) {
    status.textContent = text;
    status.className = isError ? "error" : "";
  }

  var button = document.getElementById("export-button");
  button.hidden = false;
  button.addEventListener("click", function () {
    if (cfg.mode === "comparison" && !Object.prototype.hasOwnProperty.call(cfg.headers, selectedOption() || "")) {
      say(cfg.messages.chooseFirst, true);
      return;
    }
    var blob = new Blob([sidecarText()], { type: "text/markdown;charset=utf-8" });
    var url = URL.createObjectURL(blob);
    var link = document.createElement("a");
    link.href = url;
    link.download = cfg.fileName;
    document.body.appendChild(link);
    link.click();
    link.remove();
    setTimeout(function () { URL.revokeObjectURL(url); }, 10000);
    say(cfg.messages.exported, false);
  });

  Array.prototype.forEach.call(document.querySelectorAll("button.suggest"), function (suggest) {
    suggest.hidden = false;
    suggest.addEventListener("click", function () {
      var field = document.getElementById(suggest.getAttribute("data-target"));
      if (field) { field.value = suggest.getAttribute("data-value"); field.focus(); }
    });
  });
  form.addEventListener("submit", function (event) { event.preventDefault(); });
})();
