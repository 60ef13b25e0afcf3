/**
 * The dashboard's pages as server-rendered HTML, built with the `markup` tag
 * (./markup.ts), which escapes every value it is given: post texts, names and
 * tool arguments are all someone else's content. Markup goes in only as
 * `markup` fragments or, for the program's own constants, `raw`. The only
 * script is the chart's, loaded from this server, which reads its data from a
 * JSON block (the CSP forbids inline script). Pure: data in, HTML out.
 *
 * @module
 */

import type { NodeStatus, PostView } from "../contracts/views.ts";
import type { OutputParser, RunEvent } from "../runner/harness.ts";
import { ACP_LINE_TYPES, parserFor, TranscriptRenderer } from "../runner/render.ts";
import type { RunFooter, RunHeader } from "../runner/transcripts.ts";
import type { RunIndexEntry } from "../contracts/runs.ts";
import { npubEncode } from "nostr-tools/nip19";
import { usd, usdOf } from "../money.ts";
import { formatAge, formatElapsed } from "../duration.ts";
import { oneLine, UNVERIFIED_LABEL } from "../posts/fence.ts";
import type { ChartData, Series } from "./charts.ts";
import type { SpendFigures } from "../runner/spend_figures.ts";
import type { PostsPage, ThreadView } from "./source.ts";
import { CSRF_FIELD } from "./security.ts";
import { agentsPanel } from "./agents_panel.ts";
import { joinMarkup, type Markup, markup, type MarkupValue, raw } from "./markup.ts";
import { askForm, replyForm } from "./compose.ts";
import type { Activity } from "./live.ts";
import { askStatePanel } from "./ask_state_panel.ts";

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
  ["/works", "Works"],
  ["/review", "Review"],
  ["/halt", "Halt"],
];

/** The page frame: head, navigation, notices. `head` adds elements to `<head>`. */
export function layout(
  ctx: PageContext,
  title: string,
  body: Markup,
  opts: { active?: string; head?: Markup; scripts?: string[]; live?: boolean } = {},
): string {
  // A live page redraws its `data-live` parts when the daemon reports a change
  // (assets/live.js, over Server-Sent Events from /events).
  // go.js remembers the session's path, for the `/go/…` links of notifications.
  const scriptList = [
    ...(opts.scripts ?? []),
    ...(opts.live ? ["/assets/live.js"] : []),
    "/assets/go.js",
  ];
  const liveLink = opts.live &&
    markup`<link id="live-events" rel="alternate" type="text/event-stream" href="/events">`;
  const nav = NAV.map(([href, name]) =>
    markup`<a href="${href}"${opts.active === href && raw(' class="active"')}>${name}</a>`
  );
  const scripts = scriptList.map((s) => markup`<script src="${s}"></script>`);
  return markup`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · wats</title>
<link rel="stylesheet" href="/assets/style.css">
${liveLink}${opts.head}</head>
<body data-session><header><span class="brand">wats</span><nav>${nav}</nav>${
    form(ctx, "/logout", markup`<button id="logout">Log out</button>`, "logout")
  }</header>
<main>
${ctx.noDaemon && markup`<p class="notice error" id="no-daemon">${ctx.noDaemon}</p>`}
${
    ctx.flash &&
    markup`<p class="notice ${flashKind(ctx.flash)}" data-kind="${
      flashKind(ctx.flash)
    }" id="flash">${shortIds(ctx.flash)}</p>`
  }
${body}
</main>
${joinMarkup(scripts, raw("\n"))}
</body></html>`.toString();
}

/**
 * How a flash reads: `error` for an operation refused or failed (the
 * dashboard's `error:` lines, the daemon's "not approved: …", "nothing was
 * started: …"), `done` for one that happened. Pure.
 */
export function flashKind(flash: string): "error" | "done" {
  return /^(error:|not\b|nothing\b|refused\b)/i.test(flash.trim()) ? "error" : "done";
}

/** A form posting to `action` with the CSRF token. */
export function form(ctx: PageContext, action: string, inner: Markup, cls = ""): Markup {
  return markup`<form method="post" action="${action}"${
    cls && markup` class="${cls}"`
  }><input type="hidden" name="${CSRF_FIELD}" value="${ctx.csrf}">${inner}</form>`;
}

// ---------------------------------------------------------------- overview

/** What the overview shows beyond the daemon's status. */
export interface OverviewExtras {
  /** `agent.access`, from the settings. */
  access?: string;
  chart: ChartData;
  /** Spend from the files every surface reads (src/runner/spend_figures.ts). */
  spend?: SpendFigures;
  /** The newest things the daemon reported, newest first (src/ui/live.ts). */
  activity?: readonly Activity[];
  /** True while the dashboard watches the daemon's events (absent: not live). */
  watching?: boolean;
}

/** The overview: node, profiles, relays, outbox, agent, halt, notices, budget, known agents, chart. */
export function overviewPage(
  ctx: PageContext,
  status: NodeStatus | null,
  extras: OverviewExtras,
): string {
  const parts: Markup[] = [];
  if (status === null) {
    parts.push(markup`<h1>Overview</h1><p>No daemon runs: start it with <code>wats</code>.</p>`);
  } else {
    parts.push(markup`<h1>Overview</h1>`);
    if (status.safetyNotices.length > 0) {
      parts.push(
        markup`<section class="notice warn" id="safety"><h2>Safety settings changed</h2><ul>${
          status.safetyNotices.map((n) => markup`<li>${n}</li>`)
        }</ul><p>Review them, then run <code>wats config ack</code> in a terminal. This dashboard never acknowledges.</p></section>`,
      );
    }
    if (status.halted) {
      parts.push(
        markup`<p class="notice error" id="halted">Agents halted by ${
          status.halted.by.slice(0, 16)
        }…${
          status.halted.reason && markup`: ${status.halted.reason}`
        }. <a href="/halt">Resume</a></p>`,
      );
    }
    const rows: Array<[string, MarkupValue]> = [
      ["node", markup`<code>${status.node}</code>`],
      [
        "profiles",
        markup`${status.profile.name} <code>${short(status.profile.npub)}</code>${
          status.agent && markup` · agent ${status.agent.profile}`
        }`,
      ],
      [
        "agent",
        status.agent
          ? markup`${status.agent.runtime}${extras.access && markup` · access ${extras.access}`}`
          : "none",
      ],
      ["halt", status.halted ? "halted" : "running"],
      ...(status.sandbox ?? []).map((x): [string, MarkupValue] => [
        `sandbox: ${x.who}`,
        markup`<span class="${x.state === "sandboxed" ? "ok" : "bad"}">${x.state}</span>`,
      ]),
      ["posts stored", status.storedPosts],
      ["held drafts", markup`<a href="/review" id="held-drafts">${status.pendingDrafts}</a>`],
      [
        "permission requests",
        markup`<a href="/review" id="held-requests">${status.pendingRequests ?? 0}</a>`,
      ],
    ];
    const net = status.network;
    if (net) {
      rows.push([
        "relays",
        net.relays.length === 0 ? "none" : joinMarkup(
          net.relays.map((r) =>
            markup`<span class="${r.connected ? "ok" : "bad"}">${r.url} ${
              r.connected ? "connected" : markup`down${r.lastError && markup`: ${r.lastError}`}`
            }${r.auth?.as !== undefined ? markup`, authenticated as ${r.auth.as}` : ""}${
              r.auth?.refused !== undefined ? markup`, ${r.auth.refused}` : ""
            }${r.refused ? markup`, ${r.refused} post(s) refused` : ""}</span>`
          ),
          raw("<br>"),
        ),
      ]);
      rows.push(["outbox", net.outbox]);
      if (net.listenPort !== undefined) rows.push(["relay endpoint", `port ${net.listenPort}`]);
    } else {
      rows.push([
        "relays",
        status.relays.length === 0 ? "none" : joinMarkup(status.relays, raw("<br>")),
      ]);
    }
    parts.push(
      markup`<table class="facts" id="node" data-live>${
        rows.map(([k, v]) => markup`<tr><th>${k}</th><td>${v}</td></tr>`)
      }</table>`,
    );
    const b = status.budget;
    if (b) {
      const money = b.noCost
        ? markup`<p id="budget">runs today ${b.runsToday} of ${b.runsPerDay} (this runtime reports no cost)</p>`
        : markup`<p id="budget">spend today <b>${
          usdOf(extras.spend?.budget.usdToday ?? b.usdToday, b.usdPerDay)
        }</b> · this month <b>${
          usdOf(extras.spend?.budget.usdMonth ?? b.usdMonth, b.usdPerMonth)
        }</b> · runs without a cost today ${b.runsToday} of ${b.runsPerDay}</p>`;
      parts.push(markup`<h2>Budget</h2>${money}${extras.spend && spendSplit(extras.spend)}`);
      // What runs and coding agent calls in flight hold of what is left (docs/runner.md, Budget).
      const held = b.reserved;
      parts.push(
        markup`<p id="budget-reserved">reserved ${usd(held?.usd ?? 0)} by ${
          held?.count ?? 0
        } run(s) and call(s) in flight · spent by them so far ${usd(held?.spentUsd ?? 0)}${
          held?.parked
            ? ` · ${held.parked} parked for a person's decision, holding only what they spent`
            : ""
        }</p>`,
      );
    }
    if (status.pauses?.budget) {
      parts.push(markup`<p class="notice warn">paused: ${status.pauses.budget.reason}</p>`);
    }
    const claimed = status.pauses?.claimed;
    if (claimed && claimed.count > 0) {
      parts.push(
        markup`<section id="claimed" data-live><h2>Asks claimed by other agents</h2><p>${claimed.count} ask(s) wait while another agent works on them; each wakes your agent again if its claim lapses or is released.</p><ul>${
          claimed.asks.map((c) =>
            markup`<li><a href="/posts/thread/${c.ask}">${short(c.ask)}</a> claimed by <code>${
              short(npubEncode(c.by))
            }</code>${
              c.lapsesAt !== undefined &&
              markup` · lapses ${new Date(c.lapsesAt).toISOString().slice(0, 16).replace("T", " ")}`
            }</li>`
          )
        }</ul></section>`,
      );
    }
    for (const r of status.pauses?.retrying ?? []) {
      parts.push(
        markup`<p class="notice warn">${r.what}: retrying in ${
          formatAge(Math.ceil(r.inMs / 1000))
        } (try ${
          r.tries + 1
        } of ${r.of}): its last run ended before the agent could act: ${r.error}</p>`,
      );
    }
    for (const g of status.pauses?.gaveUp ?? []) {
      parts.push(
        markup`<p class="notice warn">${g.what}: gave up after ${g.tries} tries: each run ended before the agent could act (last: ${g.error})</p>`,
      );
    }
    for (const t of status.pauses?.threads ?? []) {
      parts.push(
        markup`<p class="notice warn">thread <a href="/posts/thread/${t.thread}">${
          short(t.thread)
        }</a> paused: ${t.reason}</p>`,
      );
    }
    parts.push(agentsPanel(status));
  }
  parts.push(activityList(extras.activity ?? [], extras.watching));
  parts.push(
    markup`<h2>Spend and runs, last 30 days</h2>${
      noRuns(extras.chart.days, "chart-days-empty")
    }<div class="chart" id="chart-days"></div>`,
    markup`<h2>Last 24 hours</h2>${
      noRuns(extras.chart.hours, "chart-hours-empty")
    }<div class="chart" id="chart-hours"></div>`,
    markup`<script type="application/json" id="chart-data">${jsonInHtml(extras.chart)}</script>`,
  );
  return layout(ctx, "Overview", joinMarkup(parts, raw("\n")), {
    active: "/",
    live: true,
    head: markup`<link rel="stylesheet" href="/assets/uPlot.min.css">`,
    scripts: ["/assets/uPlot.iife.min.js", "/assets/dashboard.js"],
  });
}

/** An empty chart says so in words: flat zero lines alone read as a broken chart. */
function noRuns(series: Series, id: string): Markup {
  return series.runs.every((n) => n === 0)
    ? markup`<p class="empty" id="${id}">No runs yet.</p>`
    : markup``;
}

/**
 * JSON that cannot end the `<script>` element it sits in. Raw: a script's
 * text is not entity-decoded, so escaping it as text would break the JSON.
 */
function jsonInHtml(v: unknown): Markup {
  return raw(JSON.stringify(v).replace(/</g, "\\u003c"));
}

// ---------------------------------------------------------------- posts

/** Text longer than this (characters or lines) is collapsed under its first lines. */
export const POST_COLLAPSE_CHARS = 1200;
const POST_COLLAPSE_LINES = 20;
/** How much of a collapsed post shows before "show all". */
const POST_PREVIEW_CHARS = 300;

/**
 * A post's text; long text collapsed in a `<details>` (no script needed) whose
 * summary is its start, so a long post does not push the feed off the screen.
 */
export function postText(text: string): Markup {
  const lines = text.split("\n");
  if (text.length <= POST_COLLAPSE_CHARS && lines.length <= POST_COLLAPSE_LINES) {
    return markup`<pre class="text">${text}</pre>`;
  }
  const preview = lines.slice(0, 5).join("\n").slice(0, POST_PREVIEW_CHARS);
  return markup`<details class="long"><summary><span class="preview">${preview}…</span> show all (${text.length} characters, ${lines.length} lines)</summary><pre class="text">${text}</pre></details>`;
}

/** What a reply answers: the parent's title when it is on the page, else its short id. */
function replyTo(p: PostView, titles: ReadonlyMap<string, string>): Markup {
  if (p.parent === undefined) return markup``;
  const title = titles.get(p.parent);
  return markup` · reply to <a href="/posts/thread/${p.root ?? p.parent}">${
    title ? title : markup`<code>${short(p.parent)}</code>`
  }</a>`;
}

/** The titles of the posts on a page, by id: what replies on it answer. */
function titlesOf(posts: readonly PostView[]): Map<string, string> {
  return new Map(posts.flatMap((p) => p.title ? [[p.id, p.title] as [string, string]] : []));
}

function postCard(
  p: PostView,
  opts: { link?: boolean; titles?: ReadonlyMap<string, string> } = {},
): Markup {
  const who = p.localProfile !== undefined
    ? markup`<span class="local">${p.localProfile}</span>`
    : markup`<code title="${p.authorNpub}">${short(p.authorNpub)}</code>`;
  const labels = markup`${
    p.localProfile === undefined && markup`<span class="label">${UNVERIFIED_LABEL}</span>`
  }${p.grafted && markup`<span class="label">outside: grafted across threads</span>`}`;
  const root = p.root ?? p.id;
  const thread = opts.link !== false && markup` · <a href="/posts/thread/${root}">thread</a>`;
  return markup`<article class="post" data-id="${p.id}">
<div class="meta"><span class="kind">${p.kind}</span> by ${who} · ${
    new Date(p.createdAt * 1000).toISOString().slice(0, 16).replace("T", " ")
  } · seq ${p.seq}${replyTo(p, opts.titles ?? new Map())}${thread} ${labels}</div>
${p.title && markup`<h3>${p.title}</h3>`}${
    (p.to?.length ?? 0) > 0 &&
    markup`<div class="routing">for ${
      joinMarkup(
        p.to!.map((k) => markup`<code title="${npubEncode(k)}">${short(npubEncode(k))}</code>`),
        raw(", "),
      )
    }</div>`
  }${p.caps.length > 0 && markup`<div class="routing">caps ${p.caps.join(", ")}</div>`}${
    postText(p.text)
  }
</article>`;
}

/** The activity timeline: what the daemon reported since `wats ui` started. */
function activityList(items: readonly Activity[], watching: boolean | undefined): Markup {
  const rows = items.map((a) =>
    markup`<li><time datetime="${new Date(a.at).toISOString()}">${
      new Date(a.at).toISOString().slice(11, 19)
    }</time> ${a.href ? markup`<a href="${a.href}">${a.text}</a>` : a.text}</li>`
  );
  const state = watching === undefined
    ? ""
    : watching
    ? markup`<p class="live on">Live: watching the daemon; this page updates itself.</p>`
    : markup`<p class="live off">Live: not connected to the daemon (it retries).</p>`;
  return markup`<section id="activity" data-live><h2>Activity</h2>${state}${
    rows.length > 0
      ? markup`<ol class="activity">${rows}</ol>`
      : markup`<p>Nothing yet since the dashboard started.</p>`
  }</section>`;
}

/** The feed, newest first, with a search box and a link to older posts. */
export function postsPage(ctx: PageContext, page: PostsPage): string {
  const titles = titlesOf(page.posts);
  const body = markup`<h1>Posts</h1>${searchBox("")}
<p id="posts-count">${page.posts.length} post(s) on this page, newest first. Agents' presence announcements are not listed here: the overview's known agents shows them.</p>
${
    page.posts.length > 0
      ? joinMarkup(page.posts.map((p) => postCard(p, { titles })), raw("\n"))
      : markup`<p>No posts yet.</p>`
  }
${
    page.older !== undefined &&
    markup`<p class="paging"><a id="older" href="/posts?before=${page.older}">Older posts</a></p>`
  }`;
  return layout(ctx, "Posts", markup`${askForm(ctx.csrf)}${body}`, { active: "/posts" });
}

/** Search results. */
export function searchPage(ctx: PageContext, query: string, posts: PostView[]): string {
  const body = markup`<h1>Search</h1>${searchBox(query)}
<p>${posts.length} post(s) match.</p>${
    joinMarkup(posts.map((p) => postCard(p, { titles: titlesOf(posts) })), raw("\n"))
  }`;
  return layout(ctx, "Search", body, { active: "/posts" });
}

function searchBox(q: string): Markup {
  // A GET form changes nothing, so it carries no CSRF token.
  return markup`<form method="get" action="/posts/search" class="search"><input name="q" value="${q}" placeholder="words in a title or text"><button>Search</button></form>`;
}

/** A thread: its first post, then its replies, oldest first. */
export function threadPage(
  ctx: PageContext,
  t: ThreadView,
  works: readonly { id: string; work: string; state: string }[] = [],
): string {
  const titles = titlesOf(t.posts);
  const title = titles.get(t.root);
  const heading = title ? markup`${title}` : markup`<code>${short(t.root)}</code>`;
  // Live: claims and answers redraw the state and the posts; a reply being typed is kept.
  const body = markup`<h1>Thread: ${heading}</h1>
${t.askState && askStatePanel(t.askState, Date.now())}
${t.cut && markup`<p>Older replies were left out.</p>`}
${
    works.length > 0 &&
    markup`<p id="thread-works">Coding agents' works for this thread: ${
      joinMarkup(
        works.map((w) => markup`<a href="/works/${w.id}">${w.work}</a> (${w.state})`),
        raw(", "),
      )
    }</p>`
  }
<section id="thread-posts" data-live data-edits>${
    joinMarkup(
      t.posts.map((p) =>
        markup`${postCard(p, { link: false, titles })}${replyForm(ctx.csrf, p.id)}`
      ),
      raw("\n"),
    )
  }</section>`;
  return layout(ctx, title ? `Thread: ${title}` : "Thread", body, { active: "/posts", live: true });
}

// ---------------------------------------------------------------- runs

/** The runs, newest first, a page at a time. */
export function runsPage(
  ctx: PageContext,
  entries: readonly RunIndexEntry[],
  live: string[],
  page: { offset: number; size: number; spend?: SpendFigures },
): string {
  const newest = [...entries].reverse();
  const shown = newest.slice(page.offset, page.offset + page.size);
  const rows = shown.map((e) =>
    markup`<tr><td><a href="/runs/${e.id}">${e.id}</a></td><td>${
      e.started_at.slice(0, 19).replace("T", " ")
    }</td><td>${runReason(e)}</td><td class="status-${e.status}">${e.status}</td><td>${
      e.turns ?? "-"
    }</td><td>${e.cost_usd !== undefined ? usd(e.cost_usd) : "-"}</td><td>${
      formatElapsed(e.duration_ms)
    }</td></tr>`
  );
  const next = page.offset + page.size < newest.length &&
    markup`<p class="paging"><a id="older" href="/runs?offset=${
      page.offset + page.size
    }">Older runs</a></p>`;
  const running = live.length > 0 &&
    markup`<p class="notice" id="live">In progress: ${
      joinMarkup(live.map((id) => markup`<a href="/runs/${id}">${id}</a>`), raw(", "))
    }</p>`;
  const body = markup`<h1>Runs</h1><div id="runs-live" data-live>${running}${
    page.spend && spendSplit(page.spend)
  }<p>${entries.length} run(s).</p>
<table class="list" id="runs"><tr><th>run</th><th>started (UTC)</th><th>reason</th><th>status</th><th>turns</th><th>cost</th><th>duration</th></tr>
${joinMarkup(rows, raw("\n"))}</table>${next}</div>`;
  return layout(ctx, "Runs", body, { active: "/runs", live: true });
}

/** Why a run ran: its trigger and events, or the decision that woke it. */
function runReason(e: RunIndexEntry): string {
  if (e.events === 0 && e.decided !== undefined && e.decided.length > 0) {
    return `woken by a decision: ${oneLine(e.decided.join("; "))}`;
  }
  return `${e.trigger} (${e.events} event(s))`;
}

/**
 * Today's and this month's spend, and what of it the heartbeat runs and the
 * coding agents' calls spent: the same figures as `wats agent runs` and
 * `wats status` (src/runner/spend_figures.ts).
 */
export function spendSplit(f: SpendFigures): Markup {
  return markup`<p id="spend">spend today <b id="spend-today">${
    usd(f.budget.usdToday)
  }</b> (heartbeat runs ${usd(f.runsUsdToday)}, coding-agent calls ${
    usd(f.callsUsdToday)
  }) · this month <b id="spend-month">${usd(f.budget.usdMonth)}</b> (heartbeat runs ${
    usd(f.runsUsdMonth)
  }, coding-agent calls ${usd(f.callsUsdMonth)})</p>`;
}

/**
 * One run's transcript: the agent's messages and each tool call with its
 * arguments and result. A run still going reloads itself (live follow).
 */
export function runPage(ctx: PageContext, id: string, lines: readonly string[]): string {
  let parser: OutputParser | undefined;
  let header: RunHeader | undefined;
  let footer: RunFooter | undefined;
  const items: Markup[] = [];
  // The works its coding agents worked on: each call's lines name the work they changed.
  const works = new Set<string>();
  // ACP sessions, decisions and the coding agents a run called, as `wats agent logs` shows them.
  const acp = new TranscriptRenderer();
  const acpHtml = (out: string[]) => {
    if (out.length > 0) items.push(markup`<pre class="acp">${out.join("\n")}</pre>`);
  };
  for (const line of lines) {
    let obj: Record<string, unknown> | undefined;
    try {
      obj = JSON.parse(line);
    } catch {
      items.push(markup`<pre class="raw">${line}</pre>`);
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
      acpHtml(acp.line(line).slice(0, -1));
      continue;
    }
    if (
      obj?.type === "wats_acp" && obj.event === "work_changed" && typeof obj.work === "string" &&
      /^[A-Za-z0-9._~-]{1,200}$/.test(obj.work)
    ) {
      works.add(obj.work);
    }
    if (ACP_LINE_TYPES.has(String(obj?.type))) {
      acpHtml(acp.line(line));
      continue;
    }
    for (const e of parser?.push(line) ?? []) items.push(eventHtml(e));
  }
  acpHtml(acp.flush());
  const head = header &&
    markup`<p>${header.trigger} · ${header.events.length} event(s) · started ${header.started_at} · ${header.harness}${
      header.profile && markup` as ${header.profile}`
    }</p>`;
  const end = footer
    ? markup`<p id="run-end" class="status-${footer.status}">end: ${footer.status} · ${
      footer.turns ?? "?"
    } turn(s) · ${footer.cost_usd !== undefined ? usd(footer.cost_usd) : "no cost reported"} · ${
      formatElapsed(footer.duration_ms)
    }${footer.error && markup` · ${footer.error}`}</p>`
    : markup`<p id="run-live" class="notice">running: this page reloads every 2 seconds</p>`;
  // An event with nothing to show renders as nothing, so the transcript can be empty with items.
  const transcript = joinMarkup(items, raw("\n"));
  const worked = works.size > 0 &&
    markup`<p id="run-works">Works of this run's coding agents: ${
      joinMarkup([...works].map((w) => markup`<a href="/works/${w}">${w}</a>`), raw(", "))
    }</p>`;
  const body = markup`<h1>Run <code>${id}</code></h1>${head}${worked}
<div class="transcript">${
    transcript.toString() === "" ? markup`<p>No output yet.</p>` : transcript
  }</div>${end}`;
  return layout(ctx, `Run ${id}`, body, {
    active: "/runs",
    head: footer ? undefined : markup`<meta http-equiv="refresh" content="2">`,
  });
}

function eventHtml(e: RunEvent): Markup {
  switch (e.type) {
    case "init":
      return markup`<p class="init">mcp: ${
        e.mcpServers.map((s) => `${s.name} ${s.status}`).join(", ") || "none"
      } · ${e.tools.length} tool(s)</p>`;
    case "text":
      return markup`<div class="msg"><pre>${e.text}</pre></div>`;
    case "tool_call":
      return markup`<div class="tool-call"><span class="tool">→ ${e.name}</span><pre>${
        String(JSON.stringify(e.args, null, 2))
      }</pre></div>`;
    case "tool_result":
      return markup`<div class="tool-result${e.isError && " error"}"><span class="tool">← ${
        e.isError ? "error" : "result"
      }</span><pre>${e.text}</pre></div>`;
    case "error":
      return markup`<p class="error">! ${e.message}</p>`;
    default:
      return markup``;
  }
}

// ---------------------------------------------------------------- halt

/** Halt the agents now, or resume them: only the action that applies is offered. */
export function haltPage(ctx: PageContext, status: NodeStatus | null, now: number): string {
  const halted = status?.halted;
  const state = status === null
    ? markup`<p>No daemon runs.</p>`
    : halted
    ? markup`<p id="halt-state" class="notice error">Halted by ${halterName(halted)} ${
      formatAge(now / 1000 - halted.at)
    } ago${halted.reason && markup`: ${halted.reason}`}.</p>`
    : status.agent === null
    ? markup`<p id="halt-state">No agent runs on this node.</p>`
    : markup`<p id="halt-state">The agent runs (${status.agent.runtime}, as ${status.agent.profile}).</p>`;
  // Halting is offered even with no agent configured, so one added later starts halted;
  // resuming only when there is a halt to lift.
  const action = halted ? form(ctx, "/resume", markup`<button>Resume</button>`) : form(
    ctx,
    "/halt",
    markup`<input name="reason" placeholder="reason (optional)"><button class="danger">Halt agents now</button>`,
  );
  const body = markup`<h1>Halt</h1>${state}
${action}
<p>The same as <code>wats guardian halt</code> and <code>wats resume</code>.</p>`;
  return layout(ctx, "Halt", body, { active: "/halt" });
}

/** Who halted: one of this node's profiles by name, anyone else by a shortened npub. */
function halterName(halted: NonNullable<NodeStatus["halted"]>): string {
  return halted.byProfile ?? short(halted.by);
}

/** A refusal or an error, as a small page. */
export function messagePage(title: string, message: string): string {
  return markup`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title} · wats</title><link rel="stylesheet" href="/assets/style.css"></head><body><main><h1>${title}</h1><p>${message}</p></main></body></html>`
    .toString();
}

/**
 * The page of a `/go/…` link (a notification's): its script sends the browser
 * on to the same page in its dashboard session; without one, it says how to log in.
 */
export function goPage(path: string): string {
  return markup`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Opening · wats</title><link rel="stylesheet" href="/assets/style.css"></head><body><main><h1>Opening ${path}</h1><p id="go-login">If this page stays, this browser has no dashboard session: run <code>wats ui</code>, open the login URL it prints, then open this link again.</p></main><script src="/assets/go.js"></script></body></html>`
    .toString();
}

/** Every 64-hex-digit id in a line of text, shortened as the pages show ids. */
function shortIds(text: string): string {
  return text.replace(/\b[0-9a-f]{64}\b/g, short);
}

/** A long id or npub as the pages show it: its start and end. */
export function short(s: string): string {
  return s.length > 20 ? `${s.slice(0, 12)}…${s.slice(-6)}` : s;
}
