// Live pages: the daemon's events arrive as Server-Sent Events from the
// session's /events; after each burst the page is fetched again and every
// element marked data-live is swapped for its new version (the charts and
// whatever is not marked stay as they are). A part marked data-edits is left
// alone while the person has typed in it, so an edit is never lost. A part
// may carry data-live-query: its parameters go with the fetch (a work's page
// asks for itself as against the head it was opened with). A <details> keeps
// the open or closed state the person gave it.
"use strict";
(function () {
  const link = document.getElementById("live-events");
  if (!link || typeof EventSource === "undefined") return;
  let typed = false;
  document.addEventListener("input", (e) => {
    if (e.target.closest && e.target.closest("[data-edits]")) typed = true;
  });
  let timer = null;
  let busy = false;
  async function redraw() {
    timer = null;
    if (busy) {
      timer = setTimeout(redraw, 200);
      return;
    }
    busy = true;
    try {
      const url = new URL(location.href);
      const asked = document.querySelector("[data-live-query]");
      if (asked) {
        for (const [k, v] of new URLSearchParams(asked.getAttribute("data-live-query"))) {
          url.searchParams.set(k, v);
        }
      }
      const res = await fetch(url.href, { credentials: "same-origin" });
      if (!res.ok) return;
      const next = new DOMParser().parseFromString(await res.text(), "text/html");
      for (const el of document.querySelectorAll("[data-live][id]")) {
        if (typed && el.hasAttribute("data-edits")) continue;
        const fresh = next.getElementById(el.id);
        if (!fresh) continue;
        for (const d of el.querySelectorAll("details[id], details[data-path]")) {
          const sel = d.id
            ? `details[id="${CSS.escape(d.id)}"]`
            : `details[data-path="${CSS.escape(d.getAttribute("data-path"))}"]`;
          const same = fresh.querySelector(sel);
          if (same) same.open = d.open;
        }
        el.replaceWith(document.adoptNode(fresh));
      }
      document.body.dataset.liveRedraws = String(
        Number(document.body.dataset.liveRedraws || 0) + 1,
      );
    } catch (_) {
      // The next event tries again.
    } finally {
      busy = false;
    }
  }
  const source = new EventSource(link.href);
  source.addEventListener("open", () => {
    document.body.dataset.live = "open";
  });
  source.addEventListener("activity", () => {
    document.body.dataset.liveEvents = String(Number(document.body.dataset.liveEvents || 0) + 1);
    if (timer === null) timer = setTimeout(redraw, 150);
  });
})();
