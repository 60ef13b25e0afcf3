/**
 * How MCP tools show outcomes, drafts and the node's status to a model; posts
 * are shown by src/posts/format_post.ts.
 *
 * Every post is content written by some author, unverified until reputation
 * exists, so each one is fenced between a labelled header line and an end line
 * and never reads as an instruction; src/posts/fence.ts makes the author's text
 * and every one-line field safe to show (line breaks, control and bidi
 * characters, fence-like lines). Every value that did not come from this node
 * goes through it.
 *
 * @module
 */

import { formatAge } from "../duration.ts";
import { fenceBody, fenceLine, oneLine, UNVERIFIED_LABEL } from "../posts/fence.ts";
import { usd, usdOf } from "../money.ts";
import type { AskState, NodeStatus, PendingDraft, PostOutcome } from "../contracts/views.ts";
import { isoSeconds } from "../posts/format_post.ts";
import { formatKnownAgents, formatReach } from "./format_agents.ts";

/** What a posting tool reports after the node took the post. */
export function formatOutcome(kind: string, outcome: PostOutcome): string {
  if (outcome.held) {
    return [
      `Held for review: your ${kind} is draft ${outcome.id} (thread ${outcome.thread}).`,
      "It is not published yet: a person reviews held drafts and publishes or drops them.",
      "Do not post it again.",
    ].join("\n");
  }
  const where = outcome.thread === outcome.id
    ? "It starts a new thread with this id."
    : `Thread: ${outcome.thread}.`;
  return `Posted ${kind} ${outcome.id}. ${where}`;
}

/** Renders the drafts held for review. The text is the draft author's content. */
export function formatPending(drafts: readonly PendingDraft[], now: number): string {
  if (drafts.length === 0) return "No drafts are held for review.";
  const out = [`${drafts.length} draft(s) held for review, oldest first:`];
  const sorted = [...drafts].sort((a, b) => a.createdAt - b.createdAt);
  for (const d of sorted) {
    const meta = [
      `kind: ${oneLine(d.kind)}`,
      `by profile: ${oneLine(d.profile)}`,
      `age: ${formatAge(now - d.createdAt)}`,
    ];
    if (d.thread !== undefined) meta.push(`thread: ${oneLine(d.thread)}`);
    if (d.parent !== undefined) meta.push(`answers: ${oneLine(d.parent)}`);
    if (d.runId !== undefined) meta.push(`run: ${oneLine(d.runId)}`);
    const p = d.permission;
    if (p !== undefined) {
      // A coding agent's request: approve allows it once, reject refuses it.
      meta.push(
        `request: ${oneLine(`${p.harness}/${p.kind}`)}`,
        `work: ${oneLine(p.work)}`,
        `worktree: ${oneLine(p.worktree)}`,
        `locations: ${oneLine(p.locations.join(" ") || "(none)")}`,
        `arguments: ${oneLine(JSON.stringify(p.arguments ?? null))}`,
      );
    }
    if (d.approvedAs !== undefined) {
      meta.push(
        `approved as post ${oneLine(d.approvedAs)}; publishing did not finish: approve it again`,
      );
    }
    out.push("", fenceLine(`draft ${oneLine(d.id)} · ${UNVERIFIED_LABEL}`), meta.join(" · "));
    if (d.title !== undefined && d.title !== "") out.push(`title: ${oneLine(d.title)}`);
    out.push("", fenceBody(d.text), fenceLine(`end of draft ${oneLine(d.id)}`));
  }
  return out.join("\n");
}

/**
 * Renders the node's status for the `status` tool. What a runner session may
 * not read (the data dir, how to acknowledge a safety change) the service
 * leaves out of `s`.
 */
export function formatStatus(s: NodeStatus): string {
  const lines = [
    `node: ${oneLine(s.node)}`,
    `profile: ${oneLine(s.profile.name)} (${s.profile.npub})`,
    ...(s.dataDir !== undefined ? [`data dir: ${oneLine(s.dataDir)}`] : []),
    ...(s.network && s.network.relays.length > 0
      ? s.network.relays.map((r) =>
        `relay: ${oneLine(r.url)} ${r.connected ? "connected" : "not connected"}${
          !r.connected && r.lastError ? ` (${oneLine(r.lastError)})` : ""
        }${r.bytesReceived !== undefined ? `, ${r.bytesReceived} bytes received` : ""}${
          r.auth?.as !== undefined ? `, authenticated as ${r.auth.as}` : ""
        }${r.auth?.refused !== undefined ? `, ${oneLine(r.auth.refused)}` : ""}${
          r.refused ? `, ${r.refused} post(s) refused and kept queued` : ""
        }`
      )
      : [
        `relays: ${
          s.relays.length > 0 ? s.relays.map(oneLine).join(", ") : "none (local-only node)"
        }`,
      ]),
    ...(s.network?.listenPort !== undefined
      ? [
        `relay endpoint: ${oneLine(s.network.listenHost ?? "127.0.0.1")}:${s.network.listenPort}${
          s.network.listenAuth === "required"
            ? `, members only (net.auth = required)${
              s.network.listenClients
                ? `, ${s.network.listenClients.members} of ${s.network.listenClients.connected} client(s) authenticated as members`
                : ""
            }`
            : ", open to anyone who reaches it (net.auth = open)"
        }`,
      ]
      : []),
    ...(s.network && s.network.outbox > 0
      ? [`outbox: ${s.network.outbox} post(s) not yet acknowledged`]
      : []),
    `agent: ${
      s.agent ? `${oneLine(s.agent.runtime)} as ${oneLine(s.agent.profile)}` : "not running"
    }`,
    ...(s.sandbox ?? []).map((x) => `sandbox: ${oneLine(x.who)}: ${oneLine(x.state)}`),
    `stored posts: ${s.storedPosts}`,
    ...formatKnownAgents(s.knownAgents ?? [], s.knownAgentsTotal ?? 0, s.knownAgentsUnseen),
    `drafts held for review: ${s.pendingDrafts}; permission requests waiting: ${
      s.pendingRequests ?? 0
    }`,
    ...formatMyAsks(s.asks),
  ];
  if (s.halted) {
    const reason = s.halted.reason ? `: ${oneLine(s.halted.reason)}` : "";
    lines.push(`halted: yes, by ${oneLine(s.halted.by)} at ${isoSeconds(s.halted.at)}${reason}`);
  } else {
    lines.push("halted: no");
  }
  if (s.budget?.noCost) {
    const b = s.budget;
    lines.push(
      `budget: ${s.agent?.runtime ?? "the agent"} reports no cost; runs count against ` +
        `agent.max_runs_per_day`,
      `runs today: ${b.runsToday} of ${b.runsPerDay}`,
    );
  } else if (s.budget) {
    const b = s.budget;
    lines.push(
      `budget today: ${usdOf(b.usdToday, b.usdPerDay)} spent, ${
        usd(Math.max(0, b.usdPerDay - b.usdToday))
      } left`,
      `budget this month: ${usdOf(b.usdMonth, b.usdPerMonth)} spent, ${
        usd(Math.max(0, b.usdPerMonth - b.usdMonth))
      } left`,
      `runs today without a reported cost: ${b.runsToday} of ${b.runsPerDay} (agent.max_runs_per_day)`,
    );
  }
  if (s.budget?.reserved && s.budget.reserved.count > 0) {
    const r = s.budget.reserved;
    lines.push(
      `budget reserved: ${usd(r.usd)} by ${r.count} run(s) and coding agent call(s) in flight ` +
        `(${usd(r.spentUsd)} of it spent so far)` +
        (r.parked
          ? `; ${r.parked} of them parked for a person's decision hold only what they spent`
          : ""),
    );
  }
  if (s.pauses?.budget) {
    lines.push(
      `agent runs paused: ${oneLine(s.pauses.budget.reason)}; they resume at ${
        new Date(s.pauses.budget.until).toISOString().replace(".000Z", "Z")
      }`,
    );
  }
  if (s.pauses?.hourlyCap) {
    const c = s.pauses.hourlyCap;
    lines.push(
      `agent runs wait for the hourly cap (agent.max_runs_per_hour = ${c.max}): the next may ` +
        `start at ${new Date(c.until).toISOString().replace(".000Z", "Z")}`,
    );
  }
  for (const t of s.pauses?.threads ?? []) {
    lines.push(`thread ${t.thread} paused: ${oneLine(t.reason)}`);
  }
  const claimed = s.pauses?.claimed;
  if (claimed && claimed.count > 0) {
    lines.push(`asks other agents claimed, not waking this one (${claimed.count}):`);
    for (const c of claimed.asks) {
      const until = c.lapsesAt !== undefined
        ? `until ${new Date(c.lapsesAt).toISOString().replace(".000Z", "Z")} unless they post again`
        : "answered by them: until they release it";
      lines.push(`  - ask ${oneLine(c.ask)}: claimed by ${oneLine(c.by)}, ${until}`);
    }
    const more = claimed.count - claimed.asks.length;
    if (more > 0) lines.push(`  - and ${more} more`);
  }
  for (const r of s.pauses?.retrying ?? []) {
    lines.push(
      `${oneLine(r.what)}: retrying in ${formatAge(Math.ceil(r.inMs / 1000))} (try ${
        r.tries + 1
      } of ${r.of}; its last run ended before the agent could act: ${oneLine(r.error)})`,
    );
  }
  for (const g of s.pauses?.gaveUp ?? []) {
    lines.push(
      `${oneLine(g.what)}: gave up after ${g.tries} tries at ${isoSeconds(g.at / 1000)} ` +
        `(each run ended before the agent could act; last: ${oneLine(g.error)})`,
    );
  }
  if (s.skipped && s.skipped.length > 0) {
    lines.push(`posts a setting kept from waking the agent (newest last):`);
    for (const k of s.skipped) {
      lines.push(
        `  - ${isoSeconds(k.at / 1000)} ${oneLine(k.setting)}: ${oneLine(k.reason)} ` +
          `(author ${oneLine(k.author)})`,
      );
    }
  }
  if (s.safetyNotices.length === 0) {
    lines.push("safety notices: none");
  } else {
    lines.push(`safety notices (${s.safetyNotices.length}):`);
    for (const n of s.safetyNotices) lines.push(`  - ${oneLine(n)}`);
  }
  return lines.join("\n");
}

/** A time in ms as the tools show times: ISO 8601 to the second. */
function at(ms: number): string {
  return isoSeconds(Math.floor(ms / 1000));
}

/**
 * What became of an ask, in one line: its phase in words (docs/asks.md).
 */
export function formatAskPhase(s: AskState): string {
  switch (s.phase) {
    case "answered": {
      const [first] = s.answers;
      const more = s.answers.length > 1 ? ` (and ${s.answers.length - 1} more answer(s))` : "";
      return `answered by ${first!.by} at ${at(first!.at)}${more}`;
    }
    case "held":
      return `an answer to it is held for review on this node (draft ${
        s.heldDrafts.map(oneLine).join(", ")
      }): \`wats agent pending\` shows it`;
    case "claimed":
      return `claimed by ${s.claim!.by}${
        s.claim!.until !== undefined
          ? ` until ${at(s.claim!.until)} unless they post again`
          : " (they answered: until they release it)"
      }`;
    case "no_taker":
      return `no taker: nobody answered or claimed it by ${at(s.noTakerAt!)} (agent.ask_timeout)`;
    case "unroutable":
      return `none will wake: ${unroutable(s)}`;
    case "waiting":
      return "waiting for a taker";
  }
}

function unroutable(s: AskState): string {
  const r = s.routing;
  if (r.to.length > 0) return `no known agent is among the ${r.to.length} addressed`;
  if (r.caps.length > 0) return `no known agent has caps [${r.caps.join(", ")}]`;
  return "no agent is known (no presence received)";
}

/**
 * An ask's state as the `ask` and `thread` tools and `wats ask`/`wats thread` show it: the phase,
 * then the facts behind it, one per line.
 */
export function formatAskState(s: AskState, now: number): string {
  const lines = [`State of ask ${s.ask}: ${formatAskPhase(s)}.`];
  if (s.sent !== undefined) {
    lines.push(
      s.sent.of === 0
        ? "- sent: kept on this node (no relay in infra); nodes that connect to it fetch it"
        : `- sent: acknowledged by ${s.sent.acked} of ${s.sent.of} relay(s)${
          s.sent.acked < s.sent.of ? " (the others get it when they connect)" : ""
        }`,
    );
    for (const r of s.sent.refused ?? []) {
      lines.push(`- refused by ${r.relay}: ${r.reason} (kept queued for it; see wats status)`);
    }
  }
  lines.push(`- routing: ${formatReach(s.routing, s.routing.caps, s.routing.to)}`);
  const c = s.claim;
  if (c !== undefined && s.phase !== "claimed") {
    lines.push(
      c.ended === "released"
        ? `- claim: ${c.by} claimed it and released it at ${at(c.until!)}`
        : c.ended === "lapsed"
        ? `- claim: ${c.by} claimed it; the claim lapsed at ${at(c.until!)}`
        : `- claim: ${c.by} claims it`,
    );
  }
  for (const a of s.answers.slice(0, 5)) {
    lines.push(`- answer ${a.id} by ${a.by} at ${at(a.at)}`);
  }
  if (s.noTakerAt !== undefined && s.noTakerAt > now && s.phase !== "answered") {
    lines.push(`- no taker at ${at(s.noTakerAt)} if nobody answers or claims it by then`);
  }
  return lines.join("\n");
}

/** The status lines of the session's own asks, newest first. */
function formatMyAsks(asks: readonly AskState[] | undefined): string[] {
  if (asks === undefined || asks.length === 0) return [];
  return [
    `your newest asks (${asks.length}):`,
    ...asks.map((a) =>
      `  - ${a.ask}${a.title ? ` ${JSON.stringify(oneLine(a.title))}` : ""}: ${formatAskPhase(a)}`
    ),
  ];
}
