// Links from outside a session (a notification's `/go/<page>`) open the page
// in this browser's dashboard session. Each session lives under a random path
// (`/<scope>/`) whose cookie no other path receives, so the page remembers its
// scope in this origin's storage (another port is another origin and cannot
// read it), and `/go/<page>` sends the browser to `/<scope>/<page>`. The scope
// alone opens nothing: the session's cookie is still required.
"use strict";
(function () {
  const KEY = "wats_scope";
  const inSession = location.pathname.match(/^\/([0-9a-f]{32})\//);
  if (inSession && document.body && document.body.hasAttribute("data-session")) {
    try {
      localStorage.setItem(KEY, inSession[1]);
    } catch (_) { /* storage off: links from notifications then ask to log in */ }
    return;
  }
  const go = location.pathname.match(/^\/go(\/[A-Za-z0-9._~\/-]*)$/);
  if (!go || go[1].startsWith("//")) return;
  let scope = null;
  try {
    scope = localStorage.getItem(KEY);
  } catch (_) { /* no storage */ }
  if (scope === null || !/^[0-9a-f]{32}$/.test(scope)) return;
  location.replace("/" + scope + go[1] + location.search + location.hash);
})();
