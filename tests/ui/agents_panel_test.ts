import assert from "node:assert/strict";
import { overviewPage } from "../../src/ui/pages.ts";
import { chartData } from "../../src/ui/charts.ts";
import type { KnownAgent, NodeStatus } from "../../src/contracts/views.ts";
import { nodeStatus } from "../support/node_status.ts";

const T = 1_800_000_000_000;

function status(knownAgents: KnownAgent[], total = knownAgents.length): NodeStatus {
  return nodeStatus({ knownAgents, knownAgentsTotal: total });
}

function agent(over: Partial<KnownAgent>): KnownAgent {
  return {
    npub: "npub1" + "q".repeat(58),
    caps: [],
    state: "running",
    lastSeen: T,
    stale: false,
    reachable: true,
    local: false,
    ...over,
  };
}

Deno.test("the overview lists known agents with caps, state and last seen; stale ones marked", () => {
  const html = overviewPage(
    { csrf: "t" },
    status([
      agent({ title: "Rust reviewer", caps: ["rust", "review"] }),
      agent({
        state: "paused",
        until: T + 3_600_000,
        reachable: false,
        stale: true,
        local: true,
      }),
    ], 7),
    { chart: chartData([], 0) },
  );
  assert.match(html, /<h2>Known agents<\/h2><p>7 known, the newest 2 shown<\/p>/);
  assert.match(
    html,
    /<td><code title="npub1q+">npub1qqqqqqqqqqq…<\/code> Rust reviewer<\/td><td>rust, review<\/td><td class="ok">running<\/td><td>2027-01-15T08:00:00Z<\/td>/,
  );
  assert.match(
    html,
    /\(this node\)<\/td><td>none<\/td><td class="bad">paused until 2027-01-15T09:00:00Z<\/td><td>2027-01-15T08:00:00Z \(stale\)<\/td>/,
  );
  const none = overviewPage({ csrf: "t" }, status([]), { chart: chartData([], 0) });
  assert.match(none, /<p id="agents">none yet: no presence received<\/p>/);
});

Deno.test("an agent's title and caps from another node are shown as text, never as markup", () => {
  const evil = `"'<script>alert(1)</script><img src=x onerror="alert(2)">`;
  const html = overviewPage(
    { csrf: "t" },
    status([agent({ title: evil, caps: [evil], npub: evil })]),
    { chart: chartData([], 0) },
  );
  assert.ok(!html.includes("<script>alert"), html);
  assert.ok(!html.includes("<img"), html);
  assert.match(html, /&#60;script&#62;alert\(1\)/);
});
