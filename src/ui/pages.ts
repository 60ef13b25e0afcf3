/**
 * The dashboard's pages as server-rendered HTML. Every value that did not come
 * from this program is escaped (post texts, names, tool arguments are all
 * someone else's content); the only script is the chart's, loaded from this
 * server, which reads its data from a JSON block (the CSP forbids inline
 * script). Pure: data in, HTML out.
 *
 * @module
 */

import type { NodeStatus, PostView } from "../contracts/views.ts";
import type { HeldDraft } from "../node/review_queue.ts";
import type { OutputParser, RunEvent } from "../runner/harness.ts";
import { ACP_LINE_TYPES, parserFor, TranscriptRenderer } from "../runner/render.ts";
import type { RunFooter, RunHeader } from "../runner/transcripts.ts";
import type { RunIndexEntry } from "../contracts/runs.ts";
import { usd, usdOf } from "../money.ts";
import { formatAge, formatElapsed } from "../duration.ts";
import { clip, fenceBody, oneLine, UNVERIFIED_LABEL } from "../posts/fence.ts";
import type { IN_DOUBT, PermissionAsk } from "../contracts/coding_agents.ts";
import type { ChartData } from "./charts.ts";
import type { PostsPage, ThreadView } from "./source.ts";
import { CSRF_FIELD } from "./security.ts";

/** Escapes text for HTML content and attribute values. */
export function esc(s: unknown): string {
  return String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** What every page knows: the session's CSRF token and a flash message. */
export interface PageContext {
  csrf: string;
  /** One line shown at the top (the outcome of the last action). */
  flash?: string;
  /** Set when no daemon answers: shown on every page. */
  noDaemon?: string;
}

const NAV: Array<[string, string]> = [
  ["/", "Overview"],
  ["/posts", "Posts"],
  ["/runs", "Runs"],
  ["/review", "Review"],
  ["/halt", "Halt"],
];

/** The page frame: head, navigation, notices. `head` adds elements to `<head>`. */
export function layout(
  ctx: PageContext,
  title: string,
  body: string,
  opts: { active?: string; head?: string; scripts?: string[] } = {},
): string {
  const nav = NAV.map(([href, name]) =>
    `<a href="${href}"${opts.active === href ? ' class="active"' : ""}>${name}</a>`
  ).join("");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)} · wats</title>
<link rel="stylesheet" href="/assets/style.css">
${opts.head ?? ""}</head>
<body><header><span class="brand">wats</span><nav>${nav}</nav>${
    form(ctx, "/logout", `<button id="logout">Log out</button>`, "logout")
  }</header>
<main>
${ctx.noDaemon ? `<p class="notice error" id="no-daemon">${esc(ctx.noDaemon)}</p>` : ""}
${ctx.flash ? `<p class="notice" id="flash">${esc(ctx.flash)}</p>` : ""}
${body}
</main>
${(opts.scripts ?? []).map((s) => `<script src="${s}"></script>`).join("\n")}
</body></html>`;
}

/** A form posting to `action` with the CSRF token. */
function form(ctx: PageContext, action: string, inner: string, cls = ""): string {
  return `<form method="post" action="${esc(action)}"${cls ? ` class="${cls}"` : ""}>` +
    `<input type="hidden" name="${CSRF_FIELD}" value="${esc(ctx.csrf)}">${inner}</form>`;
}

// ---------------------------------------------------------------- overview

/** What the overview shows beyond the daemon's status. */
export interface OverviewExtras {
  /** `agent.access`, from the settings. */
  access?: string;
  chart: ChartData;
}

/** The overview: node, profiles, relays, outbox, agent, halt, notices, budget, chart. */
export function overviewPage(
  ctx: PageContext,
  status: NodeStatus | null,
  extras: OverviewExtras,
): string {
  const parts: string[] = [];
  if (status === null) {
    parts.push(`<h1>Overview</h1><p>No daemon runs: start it with <code>wats</code>.</p>`);
  } else {
    parts.push(`<h1>Overview</h1>`);
    if (status.safetyNotices.length > 0) {
      parts.push(
        `<section class="notice warn" id="safety"><h2>Safety settings changed</h2><ul>${
          status.safetyNotices.map((n) => `<li>${esc(n)}</li>`).join("")
        }</ul><p>Review them, then run <code>wats config ack</code> in a terminal. ` +
          `This dashboard never acknowledges.</p></section>`,
      );
    }
    if (status.halted) {
      parts.push(
        `<p class="notice error" id="halted">Agents halted by ${
          esc(status.halted.by.slice(0, 16))
        }…${status.halted.reason ? `: ${esc(status.halted.reason)}` : ""}. ` +
          `<a href="/halt">Resume</a></p>`,
      );
    }
    const rows: Array<[string, string]> = [
      ["node", `<code>${esc(status.node)}</code>`],
      [
        "profiles",
        `${esc(status.profile.name)} <code>${esc(short(status.profile.npub))}</code>` +
        (status.agent ? ` · agent ${esc(status.agent.profile)}` : ""),
      ],
      [
        "agent",
        status.agent
          ? `${esc(status.agent.runtime)}${extras.access ? ` · access ${esc(extras.access)}` : ""}`
          : "none",
      ],
      ["halt", status.halted ? "halted" : "running"],
      ...(status.sandbox ?? []).map((x): [string, string] => [
        `sandbox: ${esc(x.who)}`,
        `<span class="${x.state === "sandboxed" ? "ok" : "bad"}">${esc(x.state)}</span>`,
      ]),
      ["posts stored", String(status.storedPosts)],
      ["held drafts", `<a href="/review">${status.pendingDrafts}</a>`],
    ];
    const net = status.network;
    if (net) {
      rows.push([
        "relays",
        net.relays.length === 0
          ? "none"
          : net.relays.map((r) =>
            `<span class="${r.connected ? "ok" : "bad"}">${esc(r.url)} ${
              r.connected ? "connected" : `down${r.lastError ? `: ${esc(r.lastError)}` : ""}`
            }</span>`
          ).join("<br>"),
      ]);
      rows.push(["outbox", String(net.outbox)]);
      if (net.listenPort !== undefined) rows.push(["relay endpoint", `port ${net.listenPort}`]);
    } else {
      rows.push(["relays", status.relays.map(esc).join("<br>") || "none"]);
    }
    parts.push(
      `<table class="facts" id="node">${
        rows.map(([k, v]) => `<tr><th>${k}</th><td>${v}</td></tr>`).join("")
      }</table>`,
    );
    const b = status.budget;
    if (b) {
      const money = b.noCost
        ? `<p id="budget">runs today ${b.runsToday} of ${b.runsPerDay} (this runtime reports no cost)</p>`
        : `<p id="budget">spend today <b>${
          esc(usdOf(b.usdToday, b.usdPerDay))
        }</b> · this month <b>${
          esc(usdOf(b.usdMonth, b.usdPerMonth))
        }</b> · runs without a cost today ${b.runsToday} of ${b.runsPerDay}</p>`;
      parts.push(`<h2>Budget</h2>${money}`);
    }
    if (status.pauses?.budget) {
      parts.push(`<p class="notice warn">paused: ${esc(status.pauses.budget.reason)}</p>`);
    }
    for (const t of status.pauses?.threads ?? []) {
      parts.push(
        `<p class="notice warn">thread <a href="/posts/thread/${esc(t.thread)}">${
          esc(short(t.thread))
        }</a> paused: ${esc(t.reason)}</p>`,
      );
    }
  }
  parts.push(
    `<h2>Spend and runs, last 30 days</h2><div class="chart" id="chart-days"></div>`,
    `<h2>Last 24 hours</h2><div class="chart" id="chart-hours"></div>`,
    `<script type="application/json" id="chart-data">${jsonInHtml(extras.chart)}</script>`,
  );
  return layout(ctx, "Overview", parts.join("\n"), {
    active: "/",
    head: `<link rel="stylesheet" href="/assets/uPlot.min.css">`,
    scripts: ["/assets/uPlot.iife.min.js", "/assets/dashboard.js"],
  });
}

/** JSON that cannot end the `<script>` element it sits in. */
function jsonInHtml(v: unknown): string {
  return JSON.stringify(v).replace(/</g, "\\u003c");
}

// ---------------------------------------------------------------- posts

function postCard(p: PostView, opts: { link?: boolean } = {}): string {
  const who = p.localProfile !== undefined
    ? `<span class="local">${esc(p.localProfile)}</span>`
    : `<code title="${esc(p.authorNpub)}">${esc(short(p.authorNpub))}</code>`;
  const labels = [
    p.localProfile === undefined ? `<span class="label">${esc(UNVERIFIED_LABEL)}</span>` : "",
    p.grafted ? `<span class="label">outside: grafted across threads</span>` : "",
  ].join("");
  const root = p.root ?? p.id;
  const thread = opts.link === false ? "" : ` · <a href="/posts/thread/${esc(root)}">thread</a>`;
  return `<article class="post" data-id="${esc(p.id)}">
<div class="meta"><span class="kind">${esc(p.kind)}</span> by ${who} · ${
    new Date(p.createdAt * 1000).toISOString().slice(0, 16).replace("T", " ")
  } · seq ${p.seq}${thread} ${labels}</div>
${p.title ? `<h3>${esc(p.title)}</h3>` : ""}<pre class="text">${esc(p.text)}</pre>
</article>`;
}

/** The feed, newest first, with a search box and a link to older posts. */
export function postsPage(ctx: PageContext, page: PostsPage): string {
  const body = `<h1>Posts</h1>${searchBox("")}
<p>${page.newest} post(s) received in all; newest first.</p>
${page.posts.map((p) => postCard(p)).join("\n") || "<p>No posts yet.</p>"}
${
    page.older !== undefined
      ? `<p class="paging"><a id="older" href="/posts?before=${page.older}">Older posts</a></p>`
      : ""
  }`;
  return layout(ctx, "Posts", body, { active: "/posts" });
}

/** Search results. */
export function searchPage(ctx: PageContext, query: string, posts: PostView[]): string {
  const body = `<h1>Search</h1>${searchBox(query)}
<p>${posts.length} post(s) match.</p>${posts.map((p) => postCard(p)).join("\n")}`;
  return layout(ctx, "Search", body, { active: "/posts" });
}

function searchBox(q: string): string {
  // A GET form changes nothing, so it carries no CSRF token.
  return `<form method="get" action="/posts/search" class="search"><input name="q" value="${
    esc(q)
  }" placeholder="words in a title or text"><button>Search</button></form>`;
}

/** A thread: its first post, then its replies, oldest first. */
export function threadPage(ctx: PageContext, t: ThreadView): string {
  const body = `<h1>Thread <code>${esc(short(t.root))}</code></h1>
${t.cut ? "<p>Older replies were left out.</p>" : ""}
${t.posts.map((p) => postCard(p, { link: false })).join("\n")}`;
  return layout(ctx, "Thread", body, { active: "/posts" });
}

// ---------------------------------------------------------------- runs

/** The runs, newest first, a page at a time. */
export function runsPage(
  ctx: PageContext,
  entries: readonly RunIndexEntry[],
  live: string[],
  page: { offset: number; size: number },
): string {
  const newest = [...entries].reverse();
  const shown = newest.slice(page.offset, page.offset + page.size);
  const rows = shown.map((e) =>
    `<tr><td><a href="/runs/${esc(e.id)}">${esc(e.id)}</a></td><td>${
      esc(e.started_at.slice(0, 19).replace("T", " "))
    }</td><td>${esc(e.trigger)} (${e.events} event(s))</td><td class="status-${esc(e.status)}">${
      esc(e.status)
    }</td><td>${e.turns ?? "-"}</td><td>${
      e.cost_usd !== undefined ? esc(usd(e.cost_usd)) : "-"
    }</td><td>${esc(formatElapsed(e.duration_ms))}</td></tr>`
  ).join("\n");
  const next = page.offset + page.size < newest.length
    ? `<p class="paging"><a id="older" href="/runs?offset=${
      page.offset + page.size
    }">Older runs</a></p>`
    : "";
  const running = live.length > 0
    ? `<p class="notice" id="live">In progress: ${
      live.map((id) => `<a href="/runs/${esc(id)}">${esc(id)}</a>`).join(", ")
    }</p>`
    : "";
  const body = `<h1>Runs</h1>${running}<p>${entries.length} run(s).</p>
<table class="list" id="runs"><tr><th>run</th><th>started (UTC)</th><th>reason</th><th>status</th><th>turns</th><th>cost</th><th>duration</th></tr>
${rows}</table>${next}`;
  return layout(ctx, "Runs", body, { active: "/runs" });
}

/**
 * One run's transcript: the agent's messages and each tool call with its
 * arguments and result. A run still going reloads itself (live follow).
 */
export function runPage(ctx: PageContext, id: string, lines: readonly string[]): string {
  let parser: OutputParser | undefined;
  let header: RunHeader | undefined;
  let footer: RunFooter | undefined;
  const items: string[] = [];
  // ACP sessions, decisions and the coding agents a run called, as `wats agent logs` shows them.
  const acp = new TranscriptRenderer();
  const acpHtml = (out: string[]) => {
    if (out.length > 0) items.push(`<pre class="acp">${esc(out.join("\n"))}</pre>`);
  };
  for (const raw of lines) {
    let obj: Record<string, unknown> | undefined;
    try {
      obj = JSON.parse(raw);
    } catch {
      items.push(`<pre class="raw">${esc(raw)}</pre>`);
      continue;
    }
    if (obj?.type === "wats_run") {
      header = obj as unknown as RunHeader;
      parser = parserFor(header.harness);
      continue;
    }
    if (obj?.type === "wats_end") {
      footer = obj as unknown as RunFooter;
      // What comes after is said to come after the run; the footer itself is shown below.
      acpHtml(acp.line(raw).slice(0, -1));
      continue;
    }
    if (ACP_LINE_TYPES.has(String(obj?.type))) {
      acpHtml(acp.line(raw));
      continue;
    }
    for (const e of parser?.push(raw) ?? []) items.push(eventHtml(e));
  }
  acpHtml(acp.flush());
  const head = header
    ? `<p>${esc(header.trigger)} · ${header.events.length} event(s) · started ${
      esc(header.started_at)
    } · ${esc(header.harness)}${header.profile ? ` as ${esc(header.profile)}` : ""}</p>`
    : "";
  const end = footer
    ? `<p id="run-end" class="status-${esc(footer.status)}">end: ${esc(footer.status)} · ${
      footer.turns ?? "?"
    } turn(s) · ${
      footer.cost_usd !== undefined ? esc(usd(footer.cost_usd)) : "no cost reported"
    } · ${esc(formatElapsed(footer.duration_ms))}${
      footer.error ? ` · ${esc(footer.error)}` : ""
    }</p>`
    : `<p id="run-live" class="notice">running: this page reloads every 2 seconds</p>`;
  const body = `<h1>Run <code>${esc(id)}</code></h1>${head}
<div class="transcript">${items.join("\n") || "<p>No output yet.</p>"}</div>${end}`;
  return layout(ctx, `Run ${id}`, body, {
    active: "/runs",
    head: footer ? "" : `<meta http-equiv="refresh" content="2">`,
  });
}

function eventHtml(e: RunEvent): string {
  switch (e.type) {
    case "init":
      return `<p class="init">mcp: ${
        esc(e.mcpServers.map((s) => `${s.name} ${s.status}`).join(", ") || "none")
      } · ${e.tools.length} tool(s)</p>`;
    case "text":
      return `<div class="msg"><pre>${esc(e.text)}</pre></div>`;
    case "tool_call":
      return `<div class="tool-call"><span class="tool">→ ${esc(e.name)}</span><pre>${
        esc(JSON.stringify(e.args, null, 2))
      }</pre></div>`;
    case "tool_result":
      return `<div class="tool-result${e.isError ? " error" : ""}"><span class="tool">← ${
        e.isError ? "error" : "result"
      }</span><pre>${esc(e.text)}</pre></div>`;
    case "error":
      return `<p class="error">! ${esc(e.message)}</p>`;
    default:
      return "";
  }
}

// ---------------------------------------------------------------- review

/**
 * The review queue: each held draft with what it answers and the three
 * decisions, and each coding agent's request with what a person needs to
 * decide it (requestCard).
 */
export function reviewPage(ctx: PageContext, drafts: readonly HeldDraft[], now: number): string {
  const cards = drafts.map((d) => {
    if (d.permission !== undefined) return requestCard(ctx, d, d.permission, now);
    const answers = d.parent
      ? `<div class="answers">answers <a href="/posts/thread/${esc(d.thread ?? d.parent)}">${
        esc(short(d.parent))
      }</a>${
        d.parentSummary
          ? ` (${esc(d.parentSummary.kind)} by <code>${
            esc(short(d.parentSummary.author))
          }</code>)<pre class="text">${esc(d.parentSummary.text)}</pre>`
          : ""
      }</div>`
      : `<div class="answers">starts a new thread</div>`;
    const path = `/review/${encodeURIComponent(d.id)}`;
    return `<article class="draft" data-id="${esc(d.id)}">
<div class="meta"><span class="kind">${esc(d.kind)}</span> by ${esc(d.profile)} · ${
      esc(formatAge(now / 1000 - d.createdAt))
    } old · run ${d.runId ? `<a href="/runs/${esc(d.runId)}">${esc(d.runId)}</a>` : "-"} · <code>${
      esc(d.id)
    }</code></div>
${answers}${d.title ? `<h3>${esc(d.title)}</h3>` : ""}
${
      form(
        ctx,
        `${path}/approve`,
        `<textarea name="text" rows="5">${
          esc(d.text)
        }</textarea><button name="do" value="approve">Approve (publish this text)</button>`,
        "approve",
      )
    }
${
      form(
        ctx,
        `${path}/reject`,
        `<input name="reason" placeholder="why (the agent sees it in its next run)"><button>Reject</button>`,
        "reject",
      )
    }
</article>`;
  }).join("\n");
  const requests = drafts.filter((d) => d.permission !== undefined).length;
  const body = `<h1>Review</h1><p>${drafts.length - requests} draft(s) and ${requests} ` +
    `coding agent request(s) wait for review.</p>${cards || "<p>Nothing waits for review.</p>"}`;
  return layout(ctx, "Review", body, { active: "/review" });
}

/** How much of a request's arguments and task a card shows, in characters. */
export const REQUEST_TEXT_MAX = 4000;
/** How many of a request's locations a card lists. */
export const REQUEST_LOCATIONS_MAX = 20;

/**
 * A coding agent's held request (docs/acp.md, "Review: parked requests"), or
 * a call in doubt. Every field but the id is the coding agent's or the waking
 * agent's text: one-line fields go through `oneLine`, the arguments and the
 * task through `fenceBody` (no control or bidi character can hide what they
 * say), all escaped and bounded. Approve allows the request once, reject
 * refuses it; neither takes a text.
 */
function requestCard(ctx: PageContext, d: HeldDraft, p: PermissionAsk, now: number): string {
  const line = (s: string) => esc(clip(oneLine(s), 500));
  const block = (s: string, cls: string) => {
    const whole = fenceBody(s);
    const more = whole.length > REQUEST_TEXT_MAX
      ? `<p class="more">(${whole.length} characters in all: <code>wats agent pending show ${
        esc(d.id)
      }</code> shows them whole)</p>`
      : "";
    return `<pre class="${cls}">${esc(clip(whole, REQUEST_TEXT_MAX))}</pre>${more}`;
  };
  // The literal, checked against the constant: importing its value would load
  // the ACP layer into `wats ui`.
  const inDoubt = p.kind === ("in_doubt" satisfies typeof IN_DOUBT);
  const shown = p.locations.slice(0, REQUEST_LOCATIONS_MAX);
  const locations = shown.length === 0
    ? "(none)"
    : `<ul class="locations">${shown.map((l) => `<li><code>${line(l)}</code></li>`).join("")}${
      p.locations.length > shown.length
        ? `<li>and ${p.locations.length - shown.length} more</li>`
        : ""
    }</ul>`;
  const facts: Array<[string, string]> = [
    ["locations", locations],
    ["worktree", `<code>${line(p.worktree)}</code>`],
    ["checkout", `<code>${line(p.checkout)}</code>`],
    ["work", `<code>${line(p.work)}</code>`],
    ["why it asks", line(p.reason)],
    ["request id", `<code>${line(p.request_id)}</code>`],
  ];
  const path = `/review/${encodeURIComponent(d.id)}`;
  return `<article class="draft request" data-id="${esc(d.id)}">
<div class="meta"><span class="kind">${
    inDoubt ? "call in doubt" : "permission"
  }</span> by the coding agent of ${line(p.agent)} · ${
    esc(formatAge(now / 1000 - d.createdAt))
  } old · <code>${esc(d.id)}</code></div>
<h3><code class="request">${line(`${p.harness}/${p.kind}`)}</code>${
    p.title ? ` ${line(p.title)}` : ""
  }</h3>
${
    inDoubt
      ? `<p class="notice warn">The node stopped while this call ran: what it did is in doubt. ` +
        `Approve sends a new call telling the coding agent to check the worktree and finish the task; ` +
        `reject leaves the work as it is.</p>`
      : ""
  }<table class="facts">${
    facts.map(([k, v]) => `<tr><th>${k}</th><td>${v}</td></tr>`).join("")
  }</table>
${
    inDoubt
      ? ""
      : `<h4>Arguments</h4>${block(JSON.stringify(p.arguments ?? null, null, 2), "arguments")}`
  }
<h4>Task</h4>${block(p.task, "task")}
${
    form(
      ctx,
      `${path}/approve`,
      `<button name="do" value="approve">${
        inDoubt ? "Approve (finish the task)" : "Approve (allow once)"
      }</button>`,
      "approve",
    )
  }
${
    form(
      ctx,
      `${path}/reject`,
      `<button>${inDoubt ? "Reject (leave the work as it is)" : "Reject (refuse once)"}</button>`,
      "reject",
    )
  }
</article>`;
}

// ---------------------------------------------------------------- halt

/** Halt the agents now, or resume them. */
export function haltPage(ctx: PageContext, status: NodeStatus | null, now: number): string {
  const halted = status?.halted;
  const state = status === null
    ? "<p>No daemon runs.</p>"
    : halted
    ? `<p id="halt-state" class="notice error">Halted ${
      esc(formatAge(now / 1000 - halted.at))
    } ago${halted.reason ? `: ${esc(halted.reason)}` : ""}.</p>`
    : `<p id="halt-state">The agent runs.</p>`;
  const body = `<h1>Halt</h1>${state}
${
    form(
      ctx,
      "/halt",
      `<input name="reason" placeholder="reason (optional)"><button class="danger">Halt agents now</button>`,
    )
  }
${form(ctx, "/resume", `<button>Resume</button>`)}
<p>The same as <code>wats guardian halt</code> and <code>wats resume</code>.</p>`;
  return layout(ctx, "Halt", body, { active: "/halt" });
}

/** A refusal or an error, as a small page. */
export function messagePage(title: string, message: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${
    esc(title)
  } · wats</title><link rel="stylesheet" href="/assets/style.css"></head><body><main><h1>${
    esc(title)
  }</h1><p>${esc(message)}</p></main></body></html>`;
}

function short(s: string): string {
  return s.length > 20 ? `${s.slice(0, 12)}…${s.slice(-6)}` : s;
}
