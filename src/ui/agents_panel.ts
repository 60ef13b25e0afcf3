/**
 * The overview's table of known agents (docs/runner.md, Presence): each agent's
 * short npub and title, caps, state, and when its presence last arrived, stale
 * ones marked. Titles and caps are other authors' text: escaped by `markup`,
 * and already bounded by the node (src/node/presence.ts).
 *
 * @module
 */

import type { KnownAgent, NodeStatus } from "../contracts/views.ts";
import { isoSeconds } from "../posts/format_post.ts";
import { type Markup, markup } from "./markup.ts";

/** The "Known agents" section of the overview. */
export function agentsPanel(status: NodeStatus): Markup {
  const agents = status.knownAgents ?? [];
  const total = status.knownAgentsTotal ?? agents.length;
  if (total === 0) {
    return markup`<h2>Known agents</h2><p id="agents">none yet: no presence received</p>`;
  }
  return markup`<h2>Known agents</h2>${
    total > agents.length && markup`<p>${total} known, the newest ${agents.length} shown</p>`
  }<table class="list" id="agents"><tr><th>agent</th><th>caps</th><th>state</th><th>last seen</th></tr>${
    agents.map(row)
  }</table>`;
}

function row(a: KnownAgent): Markup {
  const state = a.state === "paused" && a.until !== undefined
    ? `paused until ${isoSeconds(a.until / 1000)}`
    : a.state;
  return markup`<tr><td><code title="${a.npub}">${a.npub.slice(0, 16)}…</code>${
    a.local && " (this node)"
  }${a.title && markup` ${a.title}`}</td><td>${
    a.caps.length > 0 ? a.caps.join(", ") : "none"
  }</td><td class="${a.reachable ? "ok" : "bad"}">${state}</td><td>${
    isoSeconds(a.lastSeen / 1000)
  }${a.stale && " (stale)"}</td></tr>`;
}
