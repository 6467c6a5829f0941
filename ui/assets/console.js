// Mink console: every data-refresh-ms, fetch this page's content again
// (?fragment=1 answers the inside of <main>) and swap it in place. No
// reload, no flash; a failed read leaves the last content and says so.
(function () {
  "use strict";
  var body = document.body;
  var period = parseInt(body.getAttribute("data-refresh-ms"), 10) || 2000;
  var main = document.getElementById("content");
  var live = document.getElementById("live");
  var inFlight = false;

  function show(state, text) {
    live.className = "live " + state;
    live.textContent = text;
  }

  function refresh() {
    if (inFlight || document.hidden) { return; }
    inFlight = true;
    // location.origin + pathname: never a URL with user:password@, which
    // fetch refuses.
    var url = location.origin + location.pathname + "?fragment=1";
    fetch(url, { credentials: "same-origin", cache: "no-store", headers: { "Accept": "text/html" } })
      .then(function (resp) {
        if (resp.status === 401) {
          // Signed out (a revoked principal): stop, rather than make the
          // browser prompt every period.
          clearInterval(timer);
          show("stale", "not signed in: reload to sign in");
          return null;
        }
        return resp.text().then(function (html) { return { ok: resp.ok, status: resp.status, html: html }; });
      })
      .then(function (r) {
        if (!r) { return; }
        if (!r.ok) { show("stale", "node answered " + r.status + ": retrying"); return; }
        if (main.innerHTML !== r.html) { main.innerHTML = r.html; }
        show("ok", "live");
      })
      .catch(function () { show("stale", "node unreachable: retrying"); })
      .then(function () { inFlight = false; });
  }

  // An answer that refused the caller (401, 403) is not refreshed.
  var code = parseInt(body.getAttribute("data-code"), 10) || 200;
  if (code === 401 || code === 403) { show("stale", "not signed in"); return; }
  show("ok", "live");
  var timer = setInterval(refresh, period);
  document.addEventListener("visibilitychange", function () { if (!document.hidden) { refresh(); } });
})();
