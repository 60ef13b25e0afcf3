/**
 * `wats work`: the coding agents' works (docs/acp.md "Works") — list them,
 * show one (commits, diff, calls), merge it, push it, send it back with a
 * comment, discard it. Every one is a control request to the daemon, which
 * runs git and the calls (src/acp/work_ops.ts); this command only reads its
 * answers, so it needs nothing but the socket.
 *
 * @module
 */

import type { ControlRequest } from "../contracts/session.ts";
import type { DiffFile, WorkDetail, WorksPage, WorkSummary } from "../contracts/works.ts";
import { formatAge } from "../duration.ts";
import { UsageError, WatsError } from "../errors.ts";
import { terminalLine } from "../io/terminal_text.ts";
import { writeAll } from "../io/write_all.ts";
import { usd } from "../money.ts";
import { sendControl } from "../mcp/socket_client.ts";
import type { CommandContext } from "./context.ts";
import { WORK_HELP } from "./help.ts";
import { parseCommandArgs, unexpectedArgument } from "./usage.ts";
import { print } from "./output.ts";

/** Runs `wats work …`. */
export async function workCommand(ctx: CommandContext): Promise<number> {
  const sub = ctx.words[1];
  if (ctx.argv.includes("--help") || ctx.argv.includes("-h")) {
    print(WORK_HELP);
    return 0;
  }
  switch (sub) {
    case "list":
      return await list(ctx);
    case "show":
      return await show(ctx);
    case "merge":
      return await merge(ctx);
    case "push":
      return await push(ctx);
    case "send":
      return await send(ctx);
    case "discard":
      return await discard(ctx);
    default:
      throw new UsageError(`unknown command "wats work ${sub}"\n\n${WORK_HELP}`);
  }
}

function ask(ctx: CommandContext, req: Omit<ControlRequest, "wats">): Promise<string> {
  return sendControl(ctx.paths.socket, { wats: "control", ...req });
}

/** The one ID a subcommand takes, and its flags. */
function parse<T extends Parameters<typeof parseCommandArgs>[1]["options"]>(
  ctx: CommandContext,
  sub: string,
  options: T,
  extraWords = false,
) {
  const command = `wats work ${sub}`;
  const r = parseCommandArgs(command, {
    args: ctx.argv,
    options: options ?? {},
    allowPositionals: true,
  });
  const [id, ...rest] = r.positionals;
  if (id === undefined) {
    throw new UsageError(`${command} needs a work's id: see \`wats work list\``);
  }
  if (!extraWords && rest[0] !== undefined) throw unexpectedArgument(command, rest[0]);
  return { id, rest, values: r.values as Record<string, string | boolean | undefined> };
}

async function list(ctx: CommandContext): Promise<number> {
  const r = parseCommandArgs("wats work list", {
    args: ctx.argv,
    options: { page: { type: "string" } },
  });
  const page = r.values.page === undefined ? 0 : Number(r.values.page);
  if (!Number.isSafeInteger(page) || page < 0) {
    throw new UsageError("--page must be a whole number ≥ 0 (see wats work list --help)");
  }
  const out = JSON.parse(await ask(ctx, { op: "work_list", page })) as WorksPage;
  print(renderWorksTable(out.works, Date.now()));
  if (out.next !== undefined) print(`more: wats work list --page ${out.next}`);
  return 0;
}

/** The works as a table, one line each; every field made one safe line. */
export function renderWorksTable(works: readonly WorkSummary[], now: number): string {
  if (works.length === 0) {
    return "no works yet: a coding agent's call makes one (docs/acp.md)";
  }
  const rows = [
    ["STATE", "ID", "HEAD", "UPDATED", "HARNESS", "BRANCH"],
    ...works.map((w) =>
      [
        w.state,
        w.id,
        w.head?.slice(0, 12) ?? "-",
        `${formatAge((now - w.updatedAt) / 1000)} ago`,
        w.harness || "-",
        w.branch,
      ].map(terminalLine)
    ),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((c, i) => i === r.length - 1 ? c : c.padEnd(widths[i]!)).join("  "))
    .join("\n");
}

async function show(ctx: CommandContext): Promise<number> {
  const { id, values } = parse(ctx, "show", { json: { type: "boolean" } });
  const text = await ask(ctx, { op: "work_show", work: id });
  if (values.json === true) {
    print(text);
    return 0;
  }
  const d = JSON.parse(text) as WorkDetail;
  const out = renderWork(d, ctx.stdoutIsTerminal, Date.now());
  // Written as is: every field in it is already made terminal-safe, and its colors are ours.
  await writeAll(Deno.stdout, new TextEncoder().encode(out));
  return 0;
}

const COLOR = {
  add: "\x1b[32m",
  del: "\x1b[31m",
  hunk: "\x1b[36m",
  bold: "\x1b[1m",
  off: "\x1b[0m",
};

/**
 * A work for a terminal: summary, commits, diff (colored when `color`), calls.
 * Every field from the work is made one safe line (terminalLine): a diff line
 * is the coding agent's text.
 */
export function renderWork(d: WorkDetail, color: boolean, now: number): string {
  const s = terminalLine;
  const paint = (c: keyof typeof COLOR, t: string) => color ? `${COLOR[c]}${t}${COLOR.off}` : t;
  const lines: string[] = [
    paint("bold", `work ${s(d.work)} (${s(d.state)})`),
    `id        ${s(d.id)}`,
    `branch    ${s(d.branch)}${d.head ? ` at ${d.head.slice(0, 12)}` : ""}`,
    `base      ${s(d.base)} (merge: ${d.mergeMode}${d.remote ? `, remote: ${s(d.remote)}` : ""})`,
    `checkout  ${s(d.checkout)}   harness ${s(d.harness) || "-"}   agent ${s(d.agent)}`,
    `thread    ${s(d.thread)}`,
    `worktree  ${s(d.worktree)}`,
    `updated   ${formatAge((now - d.updatedAt) / 1000)} ago`,
    ...(d.spentUsd !== undefined ? [`spend     ${usd(d.spentUsd)} this month (its calls)`] : []),
    "",
    `commits not in ${s(d.base)}: ${d.commits.length}`,
    ...d.commits.map((c) => `  ${c.sha.slice(0, 12)} ${s(c.subject)} (${s(c.author)})`),
    "",
  ];
  const adds = d.diff.reduce((n, f) => n + f.additions, 0);
  const dels = d.diff.reduce((n, f) => n + f.deletions, 0);
  lines.push(`diff against ${s(d.base)}: ${d.diff.length} file(s), +${adds} -${dels}`);
  for (const f of d.diff) lines.push(...renderFile(f, paint));
  if (d.diffCut) {
    lines.push(
      `(the diff is cut: see all of it with \`git diff ${s(d.base)}...${s(d.branch)}\`)`,
    );
  }
  if (d.uncommitted !== undefined) {
    lines.push(
      "",
      `uncommitted changes in the worktree: ${d.uncommitted.diff.length} file(s), not in the ` +
        "commits (a commit that did not happen): merge and push leave them behind",
    );
    for (const f of d.uncommitted.diff) lines.push(...renderFile(f, paint));
    if (d.uncommitted.cut) lines.push(`(these changes are cut: see them in ${s(d.worktree)})`);
  }
  if (d.mergeInto === undefined && d.state !== "merged" && d.state !== "swept") {
    lines.push(
      "",
      `merge: ${s(d.base)} is not a local branch, so the work cannot be merged into it here; ` +
        "push it and merge it there",
    );
  }
  lines.push("", `calls: ${d.calls.length}`);
  for (const c of d.calls) {
    lines.push(
      `  ${c.id} ${c.outcome}, ${formatAge((now - c.at) / 1000)} ago: ${s(oneLine(c.task))}`,
    );
    if (c.message) lines.push(`    said: ${s(oneLine(c.message))}`);
    for (const r of c.refused) lines.push(`    refused: ${s(r)}`);
  }
  lines.push(
    "",
    d.transcript.length === 0
      ? "session transcript: none kept"
      : `session transcript: ${d.transcript.length} entries (wats work show ${s(d.id)} --json)`,
  );
  return lines.join("\n") + "\n";
}

function renderFile(
  f: DiffFile,
  paint: (c: "add" | "del" | "hunk" | "bold", t: string) => string,
): string[] {
  const s = terminalLine;
  const name = f.oldPath !== undefined ? `${s(f.oldPath)} → ${s(f.path)}` : s(f.path);
  const out = [paint("bold", `--- ${f.status} ${name} (+${f.additions} -${f.deletions})`)];
  if (f.binary) return [...out, "  (binary file: not shown)"];
  for (const h of f.hunks) {
    out.push(paint("hunk", s(h.header)));
    for (const l of h.lines) {
      const text = `${l.op}${s(l.text)}`;
      out.push(l.op === "+" ? paint("add", text) : l.op === "-" ? paint("del", text) : text);
    }
  }
  if (f.cut) out.push("  (this file's diff is cut)");
  return out;
}

function oneLine(t: string): string {
  const first = t.split("\n").find((l) => l.trim() !== "")?.trim() ?? "";
  return first.length > 160 ? `${first.slice(0, 159)}…` : first;
}

async function merge(ctx: CommandContext): Promise<number> {
  const { id, values } = parse(ctx, "merge", { head: { type: "string" } });
  const head = await boundHead(ctx, id, values.head, "merging");
  print(await ask(ctx, { op: "work_merge", work: id, head }));
  return 0;
}

async function push(ctx: CommandContext): Promise<number> {
  const { id, values } = parse(ctx, "push", {
    "draft-pr": { type: "boolean" },
    head: { type: "string" },
  });
  const head = await boundHead(ctx, id, values.head, "pushing");
  print(
    await ask(ctx, { op: "work_push", work: id, draftPr: values["draft-pr"] === true, head }),
  );
  return 0;
}

/**
 * The head an operation is bound to: `--head` as given, or else the head the
 * daemon shows now, printed before the operation is sent. Either way the
 * daemon refuses, changing nothing, if the work moved past it meanwhile.
 */
async function boundHead(
  ctx: CommandContext,
  id: string,
  given: string | boolean | undefined,
  verb: string,
): Promise<string> {
  if (typeof given === "string") return given;
  const d = JSON.parse(await ask(ctx, { op: "work_show", work: id })) as WorkDetail;
  if (d.head === undefined) {
    throw new WatsError(
      "acp.work_refused",
      `work ${terminalLine(d.work)}: its branch ${terminalLine(d.branch)} is gone`,
    );
  }
  print(actingOn(verb, d));
  return d.head;
}

/** The line that names the head the CLI is about to act on, and what it holds. Pure. */
export function actingOn(verb: string, d: WorkDetail): string {
  const s = terminalLine;
  const subjects = d.commits.slice(0, 3).map((c) => s(c.subject)).join("; ");
  return `${verb} work ${s(d.work)} at ${d.head?.slice(0, 12) ?? "-"} (${d.commits.length} ` +
    `commit(s) not in ${s(d.base)}${subjects && `: ${subjects}`}${
      d.commits.length > 3 ? "; …" : ""
    }); bound to it with --head`;
}

async function send(ctx: CommandContext): Promise<number> {
  const { id, rest, values } = parse(ctx, "send", {
    text: { type: "string" },
    file: { type: "string" },
    line: { type: "string" },
  }, true);
  const text = typeof values.text === "string" ? values.text : rest.join(" ");
  if (text.trim() === "") {
    throw new UsageError('wats work send needs the comment: --text "what to change"');
  }
  if (typeof values.text === "string" && rest[0] !== undefined) {
    throw unexpectedArgument("wats work send", rest[0]);
  }
  let line: number | undefined;
  if (values.line !== undefined) {
    line = Number(values.line);
    if (!Number.isSafeInteger(line) || line < 1) {
      throw new UsageError("--line must be a line number ≥ 1 (see wats work send --help)");
    }
    if (values.file === undefined) throw new UsageError("--line needs --file PATH");
  }
  const file = typeof values.file === "string" ? values.file : undefined;
  print(
    await ask(ctx, {
      op: "work_send",
      work: id,
      text,
      ...(file !== undefined ? { file } : {}),
      ...(line !== undefined ? { line } : {}),
    }),
  );
  return 0;
}

async function discard(ctx: CommandContext): Promise<number> {
  const { id, values } = parse(ctx, "discard", {
    yes: { type: "boolean", short: "y" },
    head: { type: "string" },
  });
  let head = typeof values.head === "string" ? values.head : undefined;
  if (values.yes !== true) {
    if (!ctx.stdinIsTerminal) {
      throw new WatsError(
        "acp.work_refused",
        `not discarded: confirm with \`wats work discard ${id} --yes\` (no terminal to ask on)`,
      );
    }
    const d = JSON.parse(await ask(ctx, { op: "work_show", work: id })) as WorkDetail;
    print(lossNotice(d));
    if (!(await confirm("Discard it? [y/N] "))) {
      print("kept: nothing was removed");
      return 1;
    }
    // What the question listed is what goes: a commit that arrives meanwhile refuses it.
    head ??= d.head;
  } else if (head === undefined) {
    const d = JSON.parse(await ask(ctx, { op: "work_show", work: id })) as WorkDetail;
    if (d.head !== undefined) print(actingOn("discarding", d));
    head = d.head;
  }
  print(await ask(ctx, { op: "work_discard", work: id, ...(head ? { head } : {}) }));
  return 0;
}

/** What discarding the work loses, for the question before it. */
export function lossNotice(d: WorkDetail): string {
  const s = terminalLine;
  const lines = [`Discarding work ${s(d.work)} removes its worktree ${s(d.worktree)}`];
  lines.push(`and its branch ${s(d.branch)}, with uncommitted changes in the worktree, and`);
  lines.push(
    d.commits.length === 0
      ? `no commit that ${s(d.base)} does not have.`
      : `${d.commits.length} commit(s) that ${s(d.base)} does not have:`,
  );
  for (const c of d.commits.slice(0, 20)) lines.push(`  ${c.sha.slice(0, 12)} ${s(c.subject)}`);
  if (d.commits.length > 20) lines.push(`  … and ${d.commits.length - 20} more`);
  return lines.join("\n");
}

/** Asks on the terminal; true for y or yes. */
async function confirm(question: string): Promise<boolean> {
  await writeAll(Deno.stdout, new TextEncoder().encode(question));
  const buf = new Uint8Array(256);
  let answer = "";
  while (!answer.includes("\n")) {
    const n = await Deno.stdin.read(buf);
    if (n === null) break;
    answer += new TextDecoder().decode(buf.subarray(0, n));
  }
  return /^\s*y(es)?\s*$/i.test(answer.split("\n")[0] ?? "");
}
