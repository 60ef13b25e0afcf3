/**
 * A coding agent's held request as the review page shows it: what it asks,
 * the command of an execute request, the work it is for (linked, with the
 * uncommitted changes a `git commit -a` would take), and the decisions:
 * approve once, reject once, or allow always through a rule the person
 * confirms (written to config.toml only then, a safety change until
 * `wats config ack`).
 *
 * @module
 */

import { heldCounts, type HeldDraft } from "../node/review_queue.ts";
import type { IN_DOUBT, PermissionAsk } from "../contracts/coding_agents.ts";
import type { WorkDetail } from "../contracts/works.ts";
import { formatAge } from "../duration.ts";
import { clip, fenceBody, oneLine } from "../posts/fence.ts";
import { joinMarkup, type Markup, markup, type MarkupValue, raw } from "./markup.ts";
import { form, layout, type PageContext, short } from "./pages.ts";

/**
 * The review queue: each held draft with what it answers and the three
 * decisions, and each coding agent's request with what a person needs to
 * decide it (requestCard).
 */
export function reviewPage(
  ctx: PageContext,
  drafts: readonly HeldDraft[],
  now: number,
  works?: ReadonlyMap<string, RequestWork>,
): string {
  const cards = drafts.map((d) => {
    if (d.permission !== undefined) {
      return requestCard(ctx, { d, p: d.permission, now, work: works?.get(d.id) });
    }
    const answers = d.parent
      ? markup`<div class="answers">answers <a href="/posts/thread/${d.thread ?? d.parent}">${
        short(d.parent)
      }</a>${
        d.parentSummary &&
        markup` (${d.parentSummary.kind} by <code>${
          short(d.parentSummary.author)
        }</code>)<pre class="text">${d.parentSummary.text}</pre>`
      }</div>`
      : markup`<div class="answers">starts a new thread</div>`;
    const path = `/review/${encodeURIComponent(d.id)}`;
    return markup`<article class="draft" data-id="${d.id}">
<div class="meta"><span class="kind">${d.kind}</span> by ${d.profile} · ${
      formatAge(now / 1000 - d.createdAt)
    } old · run ${
      d.runId ? markup`<a href="/runs/${d.runId}">${d.runId}</a>` : "-"
    } · <code>${d.id}</code></div>
${answers}${d.title && markup`<h3>${d.title}</h3>`}
${
      form(
        ctx,
        `${path}/approve`,
        markup`<textarea name="text" rows="5">${d.text}</textarea><button name="do" value="approve">Approve (publish this text)</button>`,
        "approve",
      )
    }
${
      form(
        ctx,
        `${path}/reject`,
        markup`<input name="reason" placeholder="why (the agent sees it in its next run)"><button>Reject</button>`,
        "reject",
      )
    }
</article>`;
  });
  // Counted as wats status and the overview count them.
  const { pendingDrafts, pendingRequests } = heldCounts(drafts);
  // data-edits: live.js does not redraw it while the person is typing in it.
  const body =
    markup`<h1>Review</h1><div id="review-live" data-live data-edits><p>${pendingDrafts} draft(s) and ${pendingRequests} coding agent request(s) wait for review.</p>${
      drafts.length > 0 ? joinMarkup(cards, raw("\n")) : markup`<p>Nothing waits for review.</p>`
    }</div>`;
  return layout(ctx, "Review", body, { active: "/review", live: true });
}

/** The work a request is for, as the review page found it among the works. */
export interface RequestWork {
  /** The work's id (`/works/ID`). */
  id: string;
  /** Its worktree's changes not committed on its branch. */
  uncommitted?: WorkDetail["uncommitted"];
}

/** How much of a request's arguments and task a card shows, in characters. */
export const REQUEST_TEXT_MAX = 4000;
/** How many of a request's locations a card lists. */
export const REQUEST_LOCATIONS_MAX = 20;

/** What a call in doubt's card says approve and reject do. */
const IN_DOUBT_NOTICE = raw(
  `<p class="notice warn">The node stopped while this call ran: what it did is in doubt. ` +
    `Approve sends a new call telling the coding agent to check the worktree and finish the task; ` +
    `reject leaves the work as it is.</p>`,
);

/**
 * A coding agent's held request (docs/acp.md, "Review: parked requests"), or
 * a call in doubt. Every field but the id is the coding agent's or the waking
 * agent's text: one-line fields go through `oneLine`, the arguments and the
 * task through `fenceBody` (no control or bidi character can hide what they
 * say), all escaped (by `markup`) and bounded. Approve allows the request once,
 * reject refuses it; neither takes a text.
 */
export function requestCard(
  ctx: PageContext,
  o: { d: HeldDraft; p: PermissionAsk; now: number; work?: RequestWork | undefined },
): Markup {
  const { d, p, now, work } = o;
  const line = (s: string) => clip(oneLine(s), 500);
  const block = (s: string, cls: string) => {
    const whole = fenceBody(s);
    const more = whole.length > REQUEST_TEXT_MAX &&
      markup`<p class="more">(${whole.length} characters in all: <code>wats agent pending show ${d.id}</code> shows them whole)</p>`;
    return markup`<pre class="${cls}">${clip(whole, REQUEST_TEXT_MAX)}</pre>${more}`;
  };
  // The literal, checked against the constant: importing its value would load
  // the ACP layer into `wats ui`.
  const inDoubt = p.kind === ("in_doubt" satisfies typeof IN_DOUBT);
  const shown = p.locations.slice(0, REQUEST_LOCATIONS_MAX);
  const command = p.kind === "execute" ? commandOf(p.arguments) : undefined;
  const facts: Array<[string, MarkupValue]> = [
    // An execute request is about its command; a request with no location says nothing of one.
    ...(command !== undefined
      ? [["command", markup`<code id="request-command">${line(command)}</code>`] as Fact]
      : []),
    ...(shown.length > 0
      ? [[
        "locations",
        markup`<ul class="locations">${shown.map((l) => markup`<li><code>${line(l)}</code></li>`)}${
          p.locations.length > shown.length &&
          markup`<li>and ${p.locations.length - shown.length} more</li>`
        }</ul>`,
      ] as Fact]
      : []),
    ["worktree", markup`<code>${line(p.worktree)}</code>`],
    ["checkout", markup`<code>${line(p.checkout)}</code>`],
    [
      "work",
      work
        ? markup`<a class="work-link" href="/works/${work.id}">${line(p.work)}</a>`
        : markup`<code>${line(p.work)}</code>`,
    ],
    ...(work?.uncommitted ? [["uncommitted changes", uncommitted(work)] as Fact] : []),
    ["why it asks", line(p.reason)],
    ["request id", markup`<code>${line(p.request_id)}</code>`],
  ];
  const path = `/review/${encodeURIComponent(d.id)}`;
  return markup`<article class="draft request" data-id="${d.id}">
<div class="meta"><span class="kind">${
    inDoubt ? "call in doubt" : "permission"
  }</span> by the coding agent of ${line(p.agent)} · ${
    formatAge(now / 1000 - d.createdAt)
  } old · <code>${d.id}</code></div>
<h3><code class="request">${line(`${p.harness}/${p.kind}`)}</code>${
    p.title && markup` ${line(p.title)}`
  }</h3>
${inDoubt && IN_DOUBT_NOTICE}<table class="facts">${
    facts.map(([k, v]) => markup`<tr><th>${k}</th><td>${v}</td></tr>`)
  }</table>
${
    !inDoubt &&
    markup`<h4>Arguments</h4>${block(JSON.stringify(p.arguments ?? null, null, 2), "arguments")}`
  }
<h4>Task</h4>${block(p.task, "task")}
${
    form(
      ctx,
      `${path}/approve`,
      markup`<button name="do" value="approve">${
        inDoubt ? "Approve (finish the task)" : "Approve (allow once)"
      }</button>`,
      "approve",
    )
  }
${
    form(
      ctx,
      `${path}/reject`,
      markup`<button>${
        inDoubt ? "Reject (leave the work as it is)" : "Reject (refuse once)"
      }</button>`,
      "reject",
    )
  }
${
    !inDoubt &&
    markup`<p class="rule"><a class="allow-always" href="${path}/rule">Allow always (add a rule to config.toml)…</a></p>`
  }
</article>`;
}

type Fact = [string, MarkupValue];

/** The files a `git commit -a` in the work's worktree would take, each with its size of change. */
function uncommitted(work: RequestWork): Markup {
  const files = work.uncommitted?.diff ?? [];
  return markup`<div class="uncommitted"><p>${files.length} file(s) changed and not committed: what a <code>git commit -a</code> would take. <a href="/works/${work.id}">The work's page</a> shows their diff.</p><ul>${
    files.slice(0, REQUEST_LOCATIONS_MAX).map((f) =>
      markup`<li><code>${oneLine(f.path)}</code> ${f.status} +${f.additions} −${f.deletions}</li>`
    )
  }${
    files.length > REQUEST_LOCATIONS_MAX &&
    markup`<li>and ${files.length - REQUEST_LOCATIONS_MAX} more</li>`
  }</ul></div>`;
}

/** The command line an execute request carries in its arguments (`rawInput.command`), if any. */
export function commandOf(args: unknown): string | undefined {
  if (typeof args !== "object" || args === null) return undefined;
  const c = (args as { command?: unknown }).command;
  if (typeof c === "string") return c;
  return Array.isArray(c) && c.every((x) => typeof x === "string") ? c.join(" ") : undefined;
}

/**
 * "Allow always": the rule a request would be allowed by from now on,
 * editable, and the confirmation that writes it to config.toml (docs/acp.md
 * "Policy"). Nothing is written without the box ticked; the page says it is a
 * safety change until `wats config ack`, and that the request itself still
 * waits for approve or reject.
 */
export function rulePage(ctx: PageContext, d: HeldDraft, rule: string): string {
  const p = d.permission;
  const path = `/review/${encodeURIComponent(d.id)}`;
  const body = markup`<h1>Allow always</h1>
<p>The coding agent ${
    p ? oneLine(`${p.harness}/${p.kind}`) : ""
  } request <code>${d.id}</code> would be allowed from now on by this rule in <code>[policy] allow</code> of config.toml. Narrow it if it allows more than you mean (<code>*</code> and <code>**</code> are globs; docs/acp.md "Policy").</p>
<p class="notice warn">This loosens what coding agents may do: a safety change, which <code>wats status</code> and the overview flag until you run <code>wats config ack</code> in a terminal. It applies from the daemon's next start. The request itself still waits for your approve or reject.</p>${
    form(
      ctx,
      `${path}/rule`,
      markup`<label class="block">rule <input name="rule" id="rule" size="60" value="${rule}"></label>
<label class="block"><input type="checkbox" name="confirm" value="on" id="rule-confirm" class="check"> I add this rule to config.toml myself</label>
<button id="rule-write">Write the rule</button> <a href="/review">Back to the review page</a>`,
    )
  }`;
  return layout(ctx, "Allow always", body, { active: "/review" });
}
