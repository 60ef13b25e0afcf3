/**
 * The coding agents' works on the dashboard (issue 19, docs/ui.md "Works"):
 * the list, one work's page (summary, commits, diff, calls, transcript and
 * the actions), and the page that confirms a discard. Every value is the
 * daemon's view of the coding agent's work (src/contracts/works.ts) and goes
 * through `markup`; the calls' texts also through `fenceBody`/`oneLine`, as
 * the review page shows a coding agent's request, so no control or bidi
 * character can hide what they say. Pure: data in, HTML out.
 *
 * @module
 */

import type {
  WorkCall,
  WorkDetail,
  WorksPage,
  WorkState,
  WorkSummary,
} from "../contracts/works.ts";
import { fenceBody, oneLine } from "../posts/fence.ts";
import { TranscriptRenderer } from "../runner/render.ts";
import { usd } from "../money.ts";
import { diffView, type DiffViewOptions, fileDiffView } from "./diff_view.ts";
import { joinMarkup, type Markup, markup, type MarkupValue, raw } from "./markup.ts";
import { form, layout, type PageContext, postText, short } from "./pages.ts";

/** The work's page path. Ids are URL-safe by contract; encoding keeps a bad one harmless. */
export function workPath(id: string): string {
  return `/works/${encodeURIComponent(id)}`;
}

/** What can be done with a work in a state: the daemon still decides, and refuses with the reason. */
export function workActions(
  w: WorkDetail,
): { merge: boolean; push: boolean; send: boolean; discard: boolean } {
  const gone = w.state === "swept";
  return {
    // A base that is no local branch (`origin/main`) cannot be merged into: push instead.
    merge: w.state !== "merged" && !gone && w.mergeInto !== undefined && w.commits.length > 0,
    push: w.remote !== undefined && w.head !== undefined,
    // A swept work whose branch remains is continued in a worktree made again from it.
    send: w.state !== "merged" && (!gone || w.head !== undefined),
    discard: !gone || w.head !== undefined,
  };
}

function stateBadge(state: WorkState): Markup {
  return markup`<span class="work-state state-${state.replace(/ /g, "-")}">${state}</span>`;
}

/** A time as the pages show it (UTC, to the minute); "?" for one the daemon could not know. */
function when(ms: number): string {
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) ? "?" : d.toISOString().slice(0, 16).replace("T", " ");
}

/** Every work, newest first, a page at a time. */
export function worksPage(ctx: PageContext, page: WorksPage, pageNo: number): string {
  const rows = page.works.map((w: WorkSummary) =>
    markup`<tr data-id="${w.id}"><td><a href="${workPath(w.id)}">${oneLine(w.work)}</a></td><td>${
      stateBadge(w.state)
    }</td><td>${oneLine(w.harness)}</td><td>${oneLine(w.checkout)}</td><td>${
      oneLine(w.agent)
    }</td><td>${
      /^[0-9a-f]{64}$/.test(w.thread)
        ? markup`<a href="/posts/thread/${w.thread}"><code>${short(w.thread)}</code></a>`
        : "none"
    }</td><td><code>${oneLine(w.branch)}</code></td><td>${when(w.updatedAt)}</td></tr>`
  );
  const body = markup`<h1>Works</h1>
<p>Coding agents' works: each a branch in a checkout, with its worktree. The same as <code>wats work list</code>.</p>
<div id="works-live" data-live>${
    page.works.length === 0
      ? markup`<p class="empty">No works${pageNo > 0 && " on this page"}.</p>`
      : markup`<table class="list" id="works"><tr><th>work</th><th>state</th><th>harness</th><th>checkout</th><th>agent</th><th>thread</th><th>branch</th><th>updated (UTC)</th></tr>
${joinMarkup(rows, raw("\n"))}</table>`
  }
<p class="paging">${
    pageNo > 0 &&
    markup`<a id="newer" href="/works${pageNo > 1 ? `?page=${pageNo - 1}` : ""}">Newer works</a> `
  }${
    page.next !== undefined && markup`<a id="older" href="/works?page=${page.next}">Older works</a>`
  }</p></div>${page.start && newWorkForm(ctx, page.start)}`;
  return layout(ctx, "Works", body, { active: "/works", live: true });
}

/**
 * "New work": a person's task for a coding agent, started as the heartbeat
 * agent's harness tool starts one (same policy, budget and halt). Outside the
 * live part, so a redraw never takes what is being typed.
 */
function newWorkForm(ctx: PageContext, start: NonNullable<WorksPage["start"]>): Markup {
  if (start.harnesses.length === 0 || start.checkouts.length === 0) {
    return markup`<section id="new-work"><h2>New work</h2><p class="empty">A new work needs an enabled <code>[harnesses.NAME]</code> and a checkout the agent may use (<code>[checkouts.NAME]</code>, <code>agent.checkouts</code>): see docs/acp.md.</p></section>`;
  }
  const options = (names: string[]) =>
    joinMarkup(names.map((n) => markup`<option value="${n}">${n}</option>`), raw(""));
  const harness = start.harnesses.length === 1
    ? markup`<input type="hidden" name="harness" value="${start.harnesses[0]!}">`
    : markup`<label>coding agent <select name="harness" id="new-harness">${
      options(start.harnesses)
    }</select></label> `;
  return markup`<section id="new-work"><h2>New work</h2>
<p>Give a coding agent a task: it works on a new branch of the checkout, under this node's policy and budget, and its work appears above for you to review.</p>${
    form(
      ctx,
      "/works/new",
      markup`${harness}<label>checkout <select name="checkout" id="new-checkout">${
        options(start.checkouts)
      }</select></label> <label>work name <input name="work" id="new-name" required maxlength="64" placeholder="fix-login"></label>
<label class="block">task <textarea name="task" id="new-task" rows="5" required placeholder="What to do, and what done looks like"></textarea></label>
<button id="new-start">Start</button>`,
    )
  }</section>`;
}

/** What the work page was asked for beyond the work: a send-back prefill, what the reader saw. */
export interface WorkPageView {
  /** Prefill of the send-back form. */
  file?: string;
  /** What the work's calls cost this month (src/runner/spend_figures.ts `callsSpend`). */
  spentUsd?: number;
  line?: number;
  /**
   * The head the reader saw before this page (a refused operation's, a page
   * opened earlier): commits since are marked new, and the page says so.
   */
  since?: string;
  /**
   * The head this page's forms carry (a live redraw passes the one its page
   * was opened with): when the work is elsewhere now, the page says the
   * actions will be refused until it is reloaded.
   */
  bound?: string;
}

/** A head as the pages take it from a query: a full or shortened commit id. */
const HEAD = /^[0-9a-f]{12,64}$/;

/**
 * One work: summary, actions, commits, diff, calls and transcript. Live as a
 * whole but for its forms: a redraw shows the newest commits, diff, state and
 * banner, while Merge, Push and Discard keep carrying the head the page was
 * opened with, which the daemon refuses once the work moved past it.
 */
export function workPage(ctx: PageContext, w: WorkDetail, view: WorkPageView = {}): string {
  const path = workPath(w.id);
  const since = view.since !== undefined && HEAD.test(view.since) ? view.since : undefined;
  const bound = view.bound !== undefined && HEAD.test(view.bound) ? view.bound : undefined;
  const facts: Array<[string, MarkupValue]> = [
    ["state", stateBadge(w.state)],
    ["harness", oneLine(w.harness)],
    ["checkout", oneLine(w.checkout)],
    ["agent", oneLine(w.agent)],
    [
      "thread",
      /^[0-9a-f]{64}$/.test(w.thread)
        ? markup`<a href="/posts/thread/${w.thread}"><code>${short(w.thread)}</code></a>`
        : "none (started outside a thread)",
    ],
    ["branch", markup`<code>${oneLine(w.branch)}</code>`],
    [
      "base",
      markup`<code>${w.base}</code> (merge: ${
        w.mergeMode === "ff" ? "fast-forward" : "merge commit"
      })`,
    ],
    ["head", w.head ? markup`<code id="head">${w.head}</code>` : "none (no branch)"],
    ["worktree", markup`<code>${oneLine(w.worktree)}</code>${w.state === "swept" && " (gone)"}`],
    ["remote", w.remote !== undefined ? oneLine(w.remote) : "none"],
    ["updated (UTC)", when(w.updatedAt)],
    ...(view.spentUsd !== undefined
      ? [["spend this month", markup`<span id="work-spend">${usd(view.spentUsd)}</span>`] as [
        string,
        MarkupValue,
      ]]
      : []),
  ];
  const can = workActions(w);
  // What the forms carry: the head shown now. Every live redraw asks for the
  // page as against the head its forms were rendered with (a redraw keeps the
  // forms, so it passes `bound` on), and its banner tells the reader what moved.
  const opened = w.head ?? "";
  const carried = bound ?? opened;
  const liveQuery = new URLSearchParams({
    ...(since ?? carried ? { since: since ?? carried } : {}),
    ...(carried ? { bound: carried } : {}),
  }).toString();
  const headField = markup`<input type="hidden" name="head" value="${opened}">`;
  // A parked request or a call in doubt is decided on the review page, as `wats agent pending` does.
  const waiting = (w.state === "parked" || w.state === "in doubt") &&
    markup`<p class="notice warn" id="waiting">${
      w.state === "parked"
        ? "A request of this work's call waits for you"
        : "A call of this work is in doubt"
    }: decide it on the <a href="/review">review page</a>.</p>`;
  const running = w.state === "running" &&
    markup`<p class="notice" id="running">A call is running on this work: this page follows it. Merge, push, send back and discard wait until it ends.</p>`;
  const banner = markup`<div id="work-banner" data-live data-live-query="${liveQuery}">${
    changedNotice(w, since, bound, path)
  }${waiting}${running}</div>`;
  const actions = markup`<section class="work-actions" id="actions">
${
    can.merge &&
    form(
      ctx,
      `${path}/merge`,
      markup`${headField}<button id="merge">Merge into ${w.base}</button>`,
      "inline",
    )
  }
${
    can.push &&
    form(
      ctx,
      `${path}/push`,
      markup`${headField}<button id="push">Push to ${w.remote}</button> <label><input type="checkbox" name="draft_pr" value="on" class="check"> and open a draft PR</label>`,
      "inline",
    )
  }
${
    can.discard &&
    markup`<a class="danger-link" id="discard" href="${path}/discard">Discard…</a>`
  }
${
    w.mergeInto === undefined && w.state !== "merged" && w.state !== "swept" &&
    markup`<p class="notice" id="no-merge">The base <code>${w.base}</code> is not a local branch, so the work cannot be merged into it here: push it${
      w.remote === undefined ? " (the checkout has no remote: add one)" : ""
    } and merge it there, or set <code>[checkouts.${
      oneLine(w.checkout)
    }] base</code> to a local branch.</p>`
  }
${
    w.head !== undefined &&
    markup`<p class="bound">These act on head <code>${
      w.head.slice(0, 12)
    }</code>, what this page opened with: if the work moved since, they change nothing and say what came.</p>`
  }
</section>`;
  const adds = w.diff.reduce((n, f) => n + f.additions, 0);
  const dels = w.diff.reduce((n, f) => n + f.deletions, 0);
  const fresh = newCommits(w, since ?? bound);
  const commits = markup`<div id="commits-live" data-live>${
    w.commits.length === 0
      ? markup`<p class="empty">No commits that ${w.base} does not have.</p>`
      : markup`<table class="list" id="commits"><tr><th>commit</th><th>subject</th><th>author</th><th>date (UTC)</th></tr>${
        w.commits.map((c) =>
          markup`<tr data-sha="${c.sha}"${fresh.has(c.sha) && raw(' class="new"')}><td><code>${
            c.sha.slice(0, 10)
          }</code>${fresh.has(c.sha) && markup` <span class="new-mark">new</span>`}</td><td>${
            oneLine(c.subject)
          }</td><td>${oneLine(c.author)}</td><td>${when(c.at * 1000)}</td></tr>`
        )
      }</table>`
  }</div>`;
  const diff = markup`<h2 id="diff">Diff against ${w.base}</h2>
<div id="diff-live" data-live>
<p>${w.diff.length} file(s) changed, <span class="adds">+${adds}</span> <span class="dels">−${dels}</span>.</p>
${
    w.diffCut &&
    markup`<p class="notice warn" id="diff-cut">The diff is cut (as in <code>wats work show ${w.id}</code>): see all of it with <code>${
      gitDiff(w)
    }</code> in the checkout.</p>`
  }
${diffView(w.diff, diffLinks(w))}</div>`;
  const uncommitted = markup`<div id="uncommitted-live" data-live>${
    w.uncommitted !== undefined &&
    markup`<h2 id="uncommitted">Uncommitted changes</h2>
<p class="notice warn">The worktree holds ${w.uncommitted.diff.length} file(s) changed but not committed on the branch (a commit that did not happen). Merge and push carry only commits: these stay behind. Send the work back to have them committed.</p>
${
      w.uncommitted.cut &&
      markup`<p class="notice warn">These changes are cut: see them in the worktree.</p>`
    }
${diffView(w.uncommitted.diff, diffLinks(w))}`
  }</div>`;
  const send = can.send &&
    markup`<h2 id="send">Send back</h2>
<p>The comment becomes the task of the next call on this work: same worktree, same session, started by the daemon within the agent's budgets.</p>
${
      form(
        ctx,
        `${path}/send`,
        markup`<textarea name="text" rows="4" placeholder="what to change" required></textarea>
<label>file <input name="file" value="${
          view.file ?? ""
        }" placeholder="optional: path in the diff"></label>
<label>line <input name="line" value="${
          view.line ?? ""
        }" inputmode="numeric" class="short" placeholder="optional"></label>
<button id="send-back">Send back</button>`,
        "send",
      )
    }`;
  const body = markup`<h1>Work <code>${oneLine(w.work)}</code></h1>
${banner}
<table class="facts" id="work" data-live>${
    facts.map(([k, v]) => markup`<tr><th>${k}</th><td>${v}</td></tr>`)
  }</table>
${actions}
<h2>Commits</h2>${commits}
${diff}
${uncommitted}
${send}
<h2 id="calls">Calls</h2>
<div id="calls-live" data-live>${
    w.calls.length === 0 ? markup`<p class="empty">No calls recorded.</p>` : w.calls.map(callCard)
  }</div>
<h2>Transcript</h2><div id="transcript-live" data-live>${transcript(w.transcript)}</div>`;
  return layout(ctx, `Work ${oneLine(w.work)}`, body, { active: "/works", live: true });
}

/** The commits listed above `seen` (newest first): what arrived since the reader saw `seen`. */
function newCommits(w: WorkDetail, seen: string | undefined): Set<string> {
  if (seen === undefined || w.head === undefined || w.head.startsWith(seen)) return new Set();
  const at = w.commits.findIndex((c) => c.sha.startsWith(seen));
  // Not listed: the branch was rewritten (or the base took it); every commit is one not seen.
  return new Set(w.commits.slice(0, at === -1 ? w.commits.length : at).map((c) => c.sha));
}

/** What changed since the reader looked, and what that means for this page's actions. */
function changedNotice(
  w: WorkDetail,
  since: string | undefined,
  bound: string | undefined,
  path: string,
): Markup | false {
  const moved = (h: string | undefined) => h !== undefined && !(w.head?.startsWith(h) ?? false);
  const what = (seen: string) => {
    const n = newCommits(w, seen).size;
    const listed = w.commits.some((c) => c.sha.startsWith(seen));
    return w.head === undefined
      ? markup`its branch is gone`
      : listed
      ? markup`its head is now <code>${
        w.head.slice(0, 12)
      }</code>, with ${n} new commit(s), marked new below`
      : markup`its head is now <code>${
        w.head.slice(0, 12)
      }</code>, and its branch no longer holds <code>${seen.slice(0, 12)}</code> (rewritten)`;
  };
  if (moved(bound)) {
    return markup`<p class="notice warn" id="changed">This work changed while you were reading: ${
      what(bound!)
    }. The commits, diff and state here are the new ones, but Merge, Push and Discard still carry head <code>${
      bound!.slice(0, 12)
    }</code> that this page opened with, and are refused: <a href="${path}?since=${bound!}" id="reload">reload the page</a> to act on what it is now.</p>`;
  }
  if (moved(since)) {
    return markup`<p class="notice warn" id="changed">This work changed since you looked at it: ${
      what(since!)
    }. The actions below act on what this page shows now.</p>`;
  }
  return false;
}

/** The command that shows a work's whole diff, as `wats work show` names it. */
function gitDiff(w: WorkDetail): string {
  return `git diff ${oneLine(w.base)}...${oneLine(w.branch)}`;
}

/** The links of a work's diff: comment on a file, and a file's own pages. */
function diffLinks(w: WorkDetail): DiffViewOptions {
  const path = workPath(w.id);
  return {
    gitDiff: gitDiff(w),
    commentHref: (file, line) =>
      `${path}?file=${encodeURIComponent(file)}${line !== undefined ? `&line=${line}` : ""}#send`,
    fileHref: (file, hunk) =>
      `${path}/diff?file=${encodeURIComponent(file)}${hunk ? `&hunk=${hunk}` : ""}`,
  };
}

/** One file of a work's diff on its own pages (a file too long for the work page). */
export function workFilePage(ctx: PageContext, w: WorkDetail, file: string, hunk: number): string {
  // A file only the uncommitted changes touch has its pages too.
  const f = w.diff.find((d) => d.path === file) ??
    w.uncommitted?.diff.find((d) => d.path === file);
  const body = markup`<h1>Work <a href="${workPath(w.id)}"><code>${
    oneLine(w.work)
  }</code></a>: one file</h1>
${
    f === undefined
      ? markup`<p class="notice error">No file <code>${
        oneLine(file)
      }</code> in this work's diff.</p>`
      : fileDiffView(f, Math.min(hunk, Math.max(0, f.hunks.length - 1)), diffLinks(w))
  }`;
  return layout(ctx, `Work ${oneLine(w.work)}: ${oneLine(file)}`, body, { active: "/works" });
}

function callCard(c: WorkCall): Markup {
  return markup`<article class="call" data-id="${c.id}">
<div class="meta">${when(c.at)} · <span class="status-${c.outcome.replace(/ /g, "-")}">${
    oneLine(c.outcome)
  }</span> · <code>${oneLine(c.id)}</code></div>
<h4>Task</h4>${postText(fenceBody(c.task))}
${c.message !== undefined && markup`<h4>Message</h4>${postText(fenceBody(c.message))}`}
${
    c.refused.length > 0 &&
    markup`<h4>Refused requests</h4><ul class="refused">${
      c.refused.map((r) => markup`<li><code>${oneLine(r)}</code></li>`)
    }</ul>`
  }
</article>`;
}

/**
 * The ACP session transcript, collapsed: it is long, and the calls above say
 * what matters. Its entries are the call's events (`acp_update`,
 * `acp_permission`), rendered as a run's transcript renders the same events
 * (`wats_acp` lines: the coding agent's messages, its tool calls, each
 * decision). Entries of another shape are shown as they are, so a transcript
 * never renders as nothing.
 */
function transcript(lines: readonly string[]): Markup {
  if (lines.length === 0) return markup`<p class="empty">No transcript.</p>`;
  const r = new TranscriptRenderer();
  const out: string[] = [];
  for (const line of lines) {
    const shown = r.line(asRunLine(line));
    out.push(...(shown.length > 0 || isCallEvent(line) ? shown : [line]));
  }
  out.push(...r.flush());
  return markup`<details class="long" id="transcript"><summary>show the transcript (${lines.length} entries)</summary><pre class="acp">${
    fenceBody(out.join("\n"))
  }</pre></details>`;
}

const CALL_EVENTS = new Set(["acp_update", "acp_permission"]);

function parsed(line: string): Record<string, unknown> | undefined {
  try {
    const v = JSON.parse(line);
    return typeof v === "object" && v !== null ? v : undefined;
  } catch {
    return undefined;
  }
}

function isCallEvent(line: string): boolean {
  return CALL_EVENTS.has(String(parsed(line)?.type));
}

/** A call's event as the run transcript's line of it (`{…event, type: "wats_acp"}`). */
function asRunLine(line: string): string {
  const e = parsed(line);
  if (e === undefined || !CALL_EVENTS.has(String(e.type))) return line;
  return JSON.stringify({ ...e, event: e.type, type: "wats_acp" });
}

/** Confirms a discard, saying what is lost: the commits the base does not have, and the worktree. */
export function discardPage(ctx: PageContext, w: WorkDetail): string {
  const path = workPath(w.id);
  const lost = w.commits.length === 0
    ? markup`<p>The branch has no commits that <code>${w.base}</code> does not have.</p>`
    : markup`<p>These ${w.commits.length} commit(s) are not in <code>${w.base}</code> and are lost:</p><ul id="lost">${
      w.commits.map((c) =>
        markup`<li><code>${c.sha.slice(0, 10)}</code> ${oneLine(c.subject)}</li>`
      )
    }</ul>`;
  const body = markup`<h1>Discard work <code>${oneLine(w.work)}</code>?</h1>
<p class="notice warn">This removes the worktree <code>${
    oneLine(w.worktree)
  }</code> (with any change not committed in it) and the branch <code>${
    oneLine(w.branch)
  }</code>. It cannot be undone.</p>
${lost}
${
    form(
      ctx,
      `${path}/discard`,
      markup`<input type="hidden" name="head" value="${
        w.head ?? ""
      }"><button class="danger" id="confirm-discard">Discard the work</button> <a href="${path}">Cancel</a>`,
    )
  }
<p>The same as <code>wats work discard ${w.id}</code>.</p>`;
  return layout(ctx, `Discard ${oneLine(w.work)}`, body, { active: "/works" });
}
