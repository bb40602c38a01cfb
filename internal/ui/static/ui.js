// ingot console: live refresh of the [data-live] regions of a page, every
// body[data-refresh] seconds while the tab is visible; the pages work
// without it. A region that holds the keyboard focus is left alone.
(function () {
  "use strict";
  var secs = parseInt(document.body.getAttribute("data-refresh") || "0", 10);
  if (!secs || !window.fetch || !window.DOMParser) { return; }
  var note = document.getElementById("live-note");
  var busy = false;
  function say(text) {
    if (!note) { return; }
    note.textContent = text;
    note.hidden = !text;
  }
  function refresh() {
    if (busy || document.visibilityState !== "visible") { return; }
    busy = true;
    fetch(location.href, { headers: { "X-Ingot-Refresh": "1" }, credentials: "same-origin", cache: "no-store" })
      .then(function (r) {
        if (r.status === 401) { throw new Error("Your session has ended: reload the page to log in."); }
        if (!r.ok) { throw new Error("Live refresh paused: the console answered " + r.status + "."); }
        return r.text();
      })
      .then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        var regions = document.querySelectorAll("[data-live]");
        for (var i = 0; i < regions.length; i++) {
          var el = regions[i];
          var fresh = el.id && doc.getElementById(el.id);
          if (!fresh || el.contains(document.activeElement)) { continue; }
          if (fresh.innerHTML !== el.innerHTML) { el.innerHTML = fresh.innerHTML; }
        }
        document.body.setAttribute("data-refreshed", String(Date.now()));
        say("");
      })
      .catch(function (e) { say(e.message); })
      .then(function () { busy = false; });
  }
  setInterval(refresh, secs * 1000);
  document.addEventListener("visibilitychange", refresh);
})();
