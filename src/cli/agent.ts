/**
 * `wats agent`: observe the agent runner (runs, logs, attach) and review its
 * held drafts (pending, approve, reject). Observing only reads transcripts;
 * decisions go to the running daemon over the socket, which owns
 * `agent/pending/` and publishes (docs/architecture.md §2). Nothing here writes a file.
 *
 * @module
 */

import { UsageError, WatsError } from "../errors.ts";
import { formatAge } from "../duration.ts";
import { oneLine } from "../posts/fence.ts";
import { terminalLine } from "../io/terminal_text.ts";
import { type HeldDraft, ReviewQueue } from "../node/review_queue.ts";
import { renderRunsTable, TranscriptRenderer } from "../runner/render.ts";
import { readSpend, spendFigures, spendSplitLine } from "../runner/spend_figures.ts";
import { isRunId, Transcripts } from "../runner/transcripts.ts";
import { reportsCost } from "../runner/runtimes/facts.ts";
import { readRunnerState } from "../runner/state_file.ts";
import type { CommandContext } from "./context.ts";
import { callText, connectDaemon } from "../mcp/socket_client.ts";
import { parseCommandArgs, refuseArguments, unexpectedArgument } from "./usage.ts";
import { print, printErr } from "./output.ts";

/** The usage text of `wats agent`. */
export const AGENT_HELP = `Usage: wats agent runs
       wats agent logs [-f] [--run ID]
       wats agent attach
       wats agent pending [show ID]
       wats agent approve ID [--edit]
       wats agent reject ID [--reason R]

  runs       the agent's runs (oldest first) and the spend against the budget
  logs       a run's transcript for humans: the newest, or --run ID; -f follows it
  attach     follow the run in progress, and the ones after it, until Ctrl-C
  pending    drafts and coding agents' requests held for review (agent.review)
  approve    publish a held draft (--edit opens $EDITOR on its text first), or allow a request
  reject     drop a held draft (--reason goes into the agent's next prompt), or refuse a request

approve and reject need the daemon running (it owns the queue and publishes).
`;

/** How often `logs -f` and `attach` look for new lines. */
const FOLLOW_MS = 250;

/** Runs `wats agent …`. */
export async function agentCommand(ctx: CommandContext): Promise<number> {
  const sub = ctx.words[1];
  if (ctx.argv.includes("--help") || ctx.argv.includes("-h")) {
    print(AGENT_HELP);
    return 0;
  }
  const transcripts = new Transcripts({
    runsDir: ctx.paths.runsDir,
    runsIndex: ctx.paths.runsIndex,
  });
  switch (sub) {
    case "runs":
      return runs(ctx, transcripts);
    case "logs":
      return await logs(ctx, transcripts);
    case "attach":
      return await attach(ctx, transcripts);
    case "pending":
      return pending(ctx);
    case "approve":
    case "reject":
      return await decide(ctx, sub);
    default:
      throw new UsageError(`unknown command "wats agent ${sub}"`);
  }
}

function runs(ctx: CommandContext, transcripts: Transcripts): number {
  refuseArguments("wats agent runs", ctx.argv);
  const entries = transcripts.index();
  const state = readRunnerState(ctx.paths.agentDir);
  const now = Date.now();
  // The figures every surface shows (src/runner/spend_figures.ts): runs and coding agents' calls.
  const figures = spendFigures(readSpend(ctx.paths, now), now, state?.limits);
  const budget = state ? figures.budget : undefined;
  const noCost = state && !reportsCost(state.runtime) ? state.runtime : undefined;
  print(renderRunsTable(entries, budget, noCost));
  if (budget && noCost === undefined) print(spendSplitLine(figures));
  return 0;
}

async function logs(ctx: CommandContext, transcripts: Transcripts): Promise<number> {
  const { values, positionals } = parse("wats agent logs", ctx.argv, {
    follow: { type: "boolean", short: "f" },
    run: { type: "string" },
  });
  const [extra] = positionals;
  if (extra !== undefined) throw unexpectedArgument("wats agent logs", extra);
  const id = (values.run as string | undefined) ?? newest(transcripts);
  if (id === undefined) {
    print("no runs yet");
    return 0;
  }
  if (!isRunId(id)) throw new UsageError(`"${id}" is not a run id: see \`wats agent runs\``);
  await show(ctx, transcripts, id, values.follow === true);
  return 0;
}

async function attach(ctx: CommandContext, transcripts: Transcripts): Promise<number> {
  refuseArguments("wats agent attach", ctx.argv);
  const seen = new Set(transcripts.transcriptIds().filter((id) => finished(transcripts, id)));
  let waiting = false;
  while (!ctx.signal.aborted) {
    const next = transcripts.transcriptIds().sort().find((id) => !seen.has(id));
    if (next === undefined) {
      if (!waiting) printErr("no run in progress: waiting for the next one (Ctrl-C to stop)");
      waiting = true;
      await sleep(FOLLOW_MS, ctx.signal);
      continue;
    }
    waiting = false;
    seen.add(next);
    await show(ctx, transcripts, next, true);
  }
  return 0;
}

/** Prints a transcript; with `follow`, keeps printing until its footer or Ctrl-C. */
async function show(ctx: CommandContext, transcripts: Transcripts, id: string, follow: boolean) {
  const renderer = new TranscriptRenderer();
  let printed = 0;
  while (true) {
    const lines = transcripts.read(id);
    // The last line may still be being written: only take complete ones.
    const complete = follow ? lines.slice(0, Math.max(printed, lines.length - 1)) : lines;
    for (const line of complete.slice(printed)) {
      for (const out of renderer.line(line)) print(out);
    }
    printed = Math.max(printed, complete.length);
    const ended = lines.some((l) => l.includes('"type":"wats_end"'));
    if (ended) {
      for (const line of lines.slice(printed)) {
        for (const out of renderer.line(line)) print(out);
      }
      return;
    }
    if (!follow || ctx.signal.aborted) return;
    await sleep(FOLLOW_MS, ctx.signal);
  }
}

function pending(ctx: CommandContext): number {
  const [what, id, ...rest] = ctx.argv;
  const [extra] = rest;
  if (extra !== undefined) throw unexpectedArgument("wats agent pending", extra);
  const drafts = readDrafts(ctx);
  const now = Date.now();
  if (what === undefined) {
    if (drafts.length === 0) {
      print("no drafts waiting for review");
      return 0;
    }
    for (const d of drafts) {
      const p = d.permission;
      if (p !== undefined) {
        const where = p.locations.length > 0 ? ` ${p.locations.map(oneLine).join(" ")}` : "";
        print(
          `${d.id}  ${
            formatAge(now / 1000 - d.createdAt)
          }  permission ${p.harness}/${p.kind}${where}` +
            `  work ${p.work}  ${short(p.title ?? "", 60)}`,
        );
        continue;
      }
      const answers = d.parent ? `answers ${d.parent.slice(0, 12)}` : "new thread";
      print(
        `${d.id}  ${formatAge(now / 1000 - d.createdAt)}  ${d.kind.padEnd(8)} ${answers}  run ${
          d.runId ?? "-"
        }  ` +
          short(d.title ?? d.text, 60),
      );
    }
    return 0;
  }
  if (what !== "show" || id === undefined) throw new UsageError("use `wats agent pending show ID`");
  const d = drafts.find((x) => x.id === id);
  if (!d) {
    throw new WatsError("review.unknown", `no draft ${id} is waiting: see \`wats agent pending\``);
  }
  if (d.permission !== undefined) {
    const p = d.permission;
    print(
      `request ${d.id} · ${p.harness}/${p.kind} by the coding agent of ${p.agent} · ${
        formatAge(now / 1000 - d.createdAt)
      } old`,
    );
    print(`id        ${p.request_id}`);
    // One-line fields stay on their line: a newline in a title must not start
    // a line that reads as another field.
    if (p.title) print(`title     ${terminalLine(p.title)}`);
    print(`work      ${terminalLine(p.work)} (checkout ${terminalLine(p.checkout)})`);
    print(`worktree  ${terminalLine(p.worktree)}`);
    print(`locations ${p.locations.map(terminalLine).join(" ") || "(none)"}`);
    print(`why       ${terminalLine(p.reason)}`);
    print("arguments:");
    print(indent(JSON.stringify(p.arguments ?? null, null, 2)));
    print("task:");
    print(indent(p.task));
    return 0;
  }
  const parent = d.parentSummary;
  print(
    `draft ${d.id} · ${d.kind} by ${d.profile} · ${formatAge(now / 1000 - d.createdAt)} old`,
  );
  print(`run     ${d.runId ?? "-"}`);
  print(`thread  ${d.thread ?? "(new thread)"}`);
  if (d.parent) {
    print(
      `answers ${d.parent}${parent ? ` (${parent.kind} by ${parent.author.slice(0, 16)}…)` : ""}`,
    );
    if (parent) print(indent(parent.text));
  }
  if (d.title) print(`title   ${terminalLine(d.title)}`);
  print("text:");
  print(indent(d.text));
  return 0;
}

async function decide(ctx: CommandContext, what: "approve" | "reject"): Promise<number> {
  const { values, positionals } = parse(`wats agent ${what}`, ctx.argv, {
    edit: { type: "boolean" },
    reason: { type: "string" },
  });
  const [id, extra] = positionals;
  if (id === undefined) throw new UsageError(`give the draft id: wats agent ${what} ID`);
  if (extra !== undefined) throw unexpectedArgument(`wats agent ${what}`, extra);
  if (what === "approve" && values.reason !== undefined) {
    throw new UsageError("--reason goes with reject");
  }
  if (what === "reject" && values.edit) throw new UsageError("--edit goes with approve");
  let text: string | undefined;
  if (values.edit) text = await editDraft(ctx, id);
  const session = await connectDaemon(ctx.paths.socket);
  try {
    const args = what === "approve"
      ? { id, ...(text !== undefined ? { text } : {}) }
      : { id, reason: (values.reason as string | undefined) ?? "" };
    print(await callText(session, what, args));
    return 0;
  } finally {
    await session.close();
  }
}

/** Opens $VISUAL/$EDITOR on the draft's text in the one temp file this command may write. */
async function editDraft(ctx: CommandContext, id: string): Promise<string> {
  const d = readDrafts(ctx).find((x) => x.id === id);
  if (!d) {
    throw new WatsError("review.unknown", `no draft ${id} is waiting: see \`wats agent pending\``);
  }
  if (d.permission !== undefined) {
    throw new UsageError(
      `${id} is a coding agent's request, not a draft: approve it without --edit`,
    );
  }
  const editor = editorOf(ctx.env);
  const file = editFile(ctx.env, id);
  await Deno.writeTextFile(file, d.text, { mode: 0o600 });
  try {
    const r = await new Deno.Command(editor, {
      args: [file],
      stdin: "inherit",
      stdout: "inherit",
      stderr: "inherit",
    })
      .output();
    if (!r.success) {
      throw new WatsError(
        "review.editor",
        `${editor} exited with code ${r.code}: the draft is unchanged`,
      );
    }
    const text = await Deno.readTextFile(file);
    if (text.trim() === "") {
      throw new WatsError("review.empty", "the edited text is empty: the draft is unchanged");
    }
    return text.replace(/\n$/, "");
  } finally {
    await Deno.remove(file).catch(() => {});
  }
}

/** The editor `approve --edit` runs. */
export function editorOf(env: Record<string, string>): string {
  return env.VISUAL || env.EDITOR || "vi";
}

/** The only file `approve --edit` may write. */
export function editFile(env: Record<string, string>, id: string): string {
  return `${(env.TMPDIR || "/tmp").replace(/\/$/, "")}/wats-draft-${
    id.replace(/[^0-9a-f]/g, "")
  }.md`;
}

/** The drafts on disk, read only; a damaged one is named on stderr and skipped. */
function readDrafts(ctx: CommandContext): HeldDraft[] {
  return new ReviewQueue({
    dir: ctx.paths.pendingDir,
    rejectionsFile: `${ctx.paths.agentDir}/rejections.jsonl`,
    ttlMs: Infinity,
    now: Date.now,
    warn: (m) => printErr(`warning: ${m}`),
  }).read();
}

function newest(transcripts: Transcripts): string | undefined {
  return transcripts.transcriptIds().sort().at(-1);
}

function finished(transcripts: Transcripts, id: string): boolean {
  return transcripts.read(id).some((l) => l.includes('"type":"wats_end"'));
}

type Options = Record<string, { type: "string" | "boolean"; short?: string }>;

function parse(command: string, argv: string[], options: Options) {
  const r = parseCommandArgs(command, { args: argv, options, allowPositionals: true });
  return {
    values: r.values as Record<string, string | boolean | undefined>,
    positionals: r.positionals,
  };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(t);
      resolve();
    }, { once: true });
  });
}

/** A draft's title or text on one list line: made safe by `oneLine`, then cut to `max`. */
function short(s: string, max: number): string {
  const t = oneLine(s).replace(/\s+/g, " ");
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
}

function indent(s: string): string {
  return s.split("\n").map((l) => `    ${l}`).join("\n");
}
