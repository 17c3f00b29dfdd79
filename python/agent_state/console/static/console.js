// The console's one script (no inline script: the pages are served with a Content-Security-Policy
// of script-src 'self'). Everything works without it but the live refresh and the confirmations.
(function () {
  "use strict";
  // Forms with data-confirm ask first (cancel a job, release a lease).
  document.addEventListener("submit", function (event) {
    var form = event.target;
    var question = form && form.getAttribute && form.getAttribute("data-confirm");
    if (question && !window.confirm(question)) { event.preventDefault(); }
  });

  // The runs page: the table is read again when a queue notifies (server-sent events), or every
  // poll period when the console cannot hear the notifications.
  function liveRuns() {
    var table = document.getElementById("runs-table");
    if (!table) { return; }
    var mode = document.getElementById("refresh-mode");
    var partialUrl = table.getAttribute("data-partial-url");
    var eventsUrl = table.getAttribute("data-events-url");
    var pollSeconds = parseFloat(table.getAttribute("data-poll-seconds")) || 5;
    var refreshes = 0, timer = null;
    function refresh() {
      fetch(partialUrl, {credentials: "same-origin"}).then(function (r) { return r.ok ? r.text() : null; })
        .then(function (text) {
          if (text !== null) { table.innerHTML = text; refreshes += 1; document.body.setAttribute("data-refreshes", refreshes); }
        });
    }
    function poll(seconds) {
      if (!timer) { timer = setInterval(refresh, seconds * 1000); mode.textContent = "auto-refresh: every " + seconds + " s"; }
    }
    if (!window.EventSource) { poll(pollSeconds); return; }
    var source = new EventSource(eventsUrl);
    source.addEventListener("listening", function () { mode.textContent = "auto-refresh: live (queue notifications)"; });
    source.addEventListener("change", refresh);
    source.addEventListener("poll", function (e) { source.close(); poll(parseFloat(e.data) || pollSeconds); });
    source.onerror = function () { source.close(); poll(pollSeconds); };
  }
  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", liveRuns); } else { liveRuns(); }
})();
