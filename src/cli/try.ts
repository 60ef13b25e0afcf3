/**
 * `wats try`: shows a person their agent waking, on one machine, without weakening
 * `agent.ignore_local` (docs/getting-started.md, docs/decisions/node.md "wats try"). An ask
 * from one of this node's own profiles wakes nothing, by design; so this starts a throwaway
 * second node — its own temporary data directory (made and removed by the launcher), so its
 * own node key and authors — peered with this node's relay endpoint (`listen`), posts one ask
 * from it, and shows what happens: the ask arriving, the agent's run starting (or the setting
 * that kept it from waking), and the answer, fenced as another author's content. The second
 * node is stopped on every way out: answer, timeout, error, Ctrl-C; and it stops by itself
 * when this process dies (`--started-by-try`: it reads a pipe from this process to its end),
 * so a SIGKILL leaves no node behind; its directory goes at the next `wats try`
 * (src/cli/try_scratch.ts). It runs no agent and posts no presence, so it leaves no known
 * agent behind on the person's node.
 *
 * @module
 */

import { errorMessage } from "../error_message.ts";
import { parseArgs } from "node:util";
import { UsageError, WatsError } from "../errors.ts";
import { formatDuration, parseDuration } from "../duration.ts";
import { formatPost } from "../posts/format_post.ts";
import { splitList } from "../config/codecs.ts";
import { CAP_NAME_RULE, capName } from "../cap_name.ts";
import type { KnownAgent, NodeStatus, PendingDraft, PostView } from "../contracts/views.ts";
import type { CommandContext } from "./context.ts";
import { callData, callText, connectDaemon, type DaemonSession } from "../mcp/socket_client.ts";
import { selfCommandOf } from "../runner/harness.ts";
import { print } from "./output.ts";

/** The usage text of `wats try`. */
export const TRY_HELP = `Usage: wats try [--text "…"] [--to KEY]… [--caps a,b] [--timeout D]

Shows your agent waking, on this machine. An ask from this node's own profiles
wakes nothing (agent.ignore_local, docs/runner.md), so \`wats try\` starts a
throwaway second node (its own temporary data directory and keys), connects it
to this node's relay endpoint, posts one ask from there and shows the agent's
run and answer as they arrive. Then it stops that node and removes its
directory, also on Ctrl-C or an error.

The running node (\`wats\`) must have an agent (\`wats setup claude --about …\`)
and a relay endpoint: start it with \`wats --listen 127.0.0.1:7447\` (or
\`wats config set listen 127.0.0.1:7447\` and restart it).

  --text "…"     the ask (default: a question about this machine's agent)
  --to KEY       address the ask to a profile (npub or hex; repeat for more):
                 only the agents named wake (docs/runner.md, routing)
  --caps a,b     name capabilities: without --to, only agents whose
                 agent.caps match wake
  --timeout D    how long to wait for the answer (default 5m; e.g. 90s, 10m)

An ask the routing keeps from your agent (--to naming other agents, --caps it
does not hold) is refused before anything starts, saying which setting decides.
While it waits, wats try says what holds the run back (agent.max_runs_per_hour,
a budget, a retry), and an answer held for review (agent.review) is shown as
such, with the command that shows it.

Exit codes: 0 the answer arrived; 1 it did not (timeout, a setting kept the
agent from waking, the answer is held for review, the run ended without an
answer, no node, no endpoint); 2 a usage error; 130 stopped by Ctrl-C.
`;

/** The default ask. */
export const TRY_TEXT = "Hello from `wats try`: what can you help with? Answer in one sentence.";

/** The default `--timeout`. */
export const TRY_TIMEOUT_MS = 5 * 60_000;

/** The second node's profile, so its posts say where they came from. */
export const TRY_PROFILE = "try";

/** `wats try`'s options. */
export interface TryArgs {
  help: boolean;
  text: string;
  timeoutMs: number;
  /** The ask's `to`, as given (the second node judges it). */
  to?: string[];
  /** The ask's caps, as given. */
  caps?: string[];
}

/** Reads `wats try`'s arguments. Pure. */
export function parseTryArgs(argv: string[]): TryArgs {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: {
        help: { type: "boolean", short: "h" },
        text: { type: "string" },
        to: { type: "string", multiple: true },
        caps: { type: "string" },
        timeout: { type: "string" },
      },
      allowPositionals: true,
      strict: true,
    });
  } catch (err) {
    const m = errorMessage(err).match(/^Unknown option '([^']+)'/);
    throw new UsageError(
      m ? `unknown flag ${m[1]}: see \`wats try --help\`` : errorMessage(err),
    );
  }
  const v = parsed.values;
  if (parsed.positionals.length > 0) {
    throw new UsageError(
      `unexpected argument "${parsed.positionals[0]}": give the ask as --text "…"`,
    );
  }
  const text = v.text ?? TRY_TEXT;
  if (text.trim() === "") throw new UsageError('--text is empty: give the ask, e.g. --text "…"');
  let timeoutMs = TRY_TIMEOUT_MS;
  if (v.timeout !== undefined) {
    const ms = parseDuration(v.timeout);
    if (ms === undefined || ms <= 0) {
      throw new UsageError(`--timeout ${v.timeout} is not a duration such as 90s or 10m`);
    }
    timeoutMs = ms;
  }
  const caps = v.caps === undefined ? undefined : splitList(v.caps).map((raw) => {
    const name = capName(raw);
    if (name === undefined) {
      throw new UsageError(`--caps: "${raw}" is not a capability name: use ${CAP_NAME_RULE}`);
    }
    return name;
  });
  return {
    help: v.help === true,
    text,
    timeoutMs,
    ...(v.to !== undefined && v.to.length > 0 ? { to: v.to } : {}),
    ...(caps !== undefined && caps.length > 0 ? { caps } : {}),
  };
}

/**
 * The `ws://` URL a second node on this machine uses to reach the daemon's
 * endpoint, or a `WatsError` saying what to set when there is none.
 */
export function endpointOf(status: NodeStatus): string {
  const port = status.network?.listenPort;
  if (port === undefined) {
    throw new WatsError(
      "try.no_endpoint",
      "this node serves no relay endpoint for a second node to connect to: stop it and start " +
        "it with `wats --listen 127.0.0.1:7447` (or `wats config set listen 127.0.0.1:7447`, " +
        "then restart it), then run `wats try` again",
    );
  }
  const host = status.network?.listenHost;
  // An endpoint bound to every address is reached on loopback.
  const reach = host === undefined || host === "" || host === "0.0.0.0" || host === "::" ||
      host === "[::]"
    ? "127.0.0.1"
    : host.includes(":") && !host.startsWith("[")
    ? `[${host}]`
    : host;
  return `ws://${reach}:${port}`;
}

/** How long the second node has to stop on SIGTERM before it is killed. */
const STOP_MS = 15_000;

/** How often the two nodes are looked at while waiting. */
const POLL_MS = 500;

/** Runs `wats try`. The launcher made `ctx.scratch` and removes it afterwards. */
export async function tryCommand(ctx: CommandContext): Promise<number> {
  const args = parseTryArgs(ctx.argv);
  if (args.help) {
    print(TRY_HELP);
    return 0;
  }
  const dir = tryDirOf(ctx);
  const here = await connectDaemon(ctx.paths.socket, undefined, { data: true });
  let node: Deno.ChildProcess | undefined;
  let there: DaemonSession | undefined;
  let lifeline: WritableStreamDefaultWriter<Uint8Array> | undefined;
  try {
    const status = await callData<NodeStatus>(here, "status");
    if (status.agent === null) {
      throw new WatsError(
        "try.no_agent",
        'this node runs no agent: set one up with `wats setup claude --about "…"` (or ' +
          "`wats setup codex`), restart `wats`, then run `wats try` again",
      );
    }
    if (status.halted !== null) {
      throw new WatsError(
        "try.halted",
        "this node's agent is halted: end the halt with `wats resume`, then run `wats try` again",
      );
    }
    const url = endpointOf(status);
    const kept = await routingRefusal(here, args);
    if (kept !== undefined) {
      print(kept);
      return 1;
    }
    print(`starting a throwaway node in ${dir}, connected to this node at ${url}`);
    const self = selfCommandOf(ctx.self);
    node = new Deno.Command(self.command, {
      args: [
        ...self.args,
        "--data-dir",
        dir,
        "node",
        // Flags win over WATS_* variables and config: it runs no agent, listens nowhere,
        // and syncs with this node only.
        // No agent, no presence, and it stops when this process's pipe to it closes,
        // even if this process is killed (SIGKILL included).
        "--started-by-try",
        "--listen",
        "",
        "--infra",
        url,
        "--log-level",
        "warning",
      ],
      stdin: "piped",
      stdout: "null",
      stderr: "piped",
    }).spawn();
    // Held open, never written: the node reads its end until it closes.
    lifeline = node.stdin.getWriter();
    const stderr = collect(node.stderr);
    there = await waitForSocket(`${dir}/mcp.sock`, node, stderr, ctx.signal);
    if (there === undefined) return stopped();
    const postedAt = Date.now();
    const asked = await callText(there, "ask", {
      title: "wats try",
      text: args.text,
      ...(args.to !== undefined ? { to: args.to } : {}),
      ...(args.caps !== undefined ? { caps: args.caps } : {}),
    });
    const askId = asked.match(/\b[0-9a-f]{64}\b/)?.[0];
    if (askId === undefined) {
      throw new WatsError("try.no_id", `the second node posted no ask: ${asked}`);
    }
    print(`posted: ask ${askId.slice(0, 12)} as "${TRY_PROFILE}" on the throwaway node`);
    return await watch(ctx, { here, there }, { askId, postedAt, timeoutMs: args.timeoutMs });
  } finally {
    await there?.close().catch(() => {});
    await here.close().catch(() => {});
    await lifeline?.close().catch(() => {});
    if (node !== undefined) await stop(node);
  }
}

/** The scratch data directory the launcher made for this run. */
function tryDirOf(ctx: CommandContext): string {
  const dir = ctx.scratch;
  if (dir === undefined) {
    throw new WatsError("try.no_dir", "no scratch directory was made for `wats try`");
  }
  return dir;
}

/** Prints progress until the answer arrives; returns the exit code. */
async function watch(
  ctx: CommandContext,
  nodes: { here: DaemonSession; there: DaemonSession },
  ask: { askId: string; postedAt: number; timeoutMs: number },
): Promise<number> {
  const { here, there } = nodes;
  const { askId, postedAt, timeoutMs } = ask;
  const deadline = Date.now() + timeoutMs;
  let arrived = false;
  let runId: string | undefined;
  let runEnded = false;
  let toldWait = "";
  while (!ctx.signal.aborted) {
    const status = await callData<NodeStatus>(here, "status");
    const held = arrived ? await heldDraft(here, askId) : undefined;
    if (held !== undefined) return heldForReview(held);
    const skip = status.skipped?.find((s) => s.post === askId);
    if (skip !== undefined) {
      print(`this node did not wake its agent: ${skip.reason}`);
      print(`(wats status lists it; the setting is ${skip.setting}, docs/runner.md)`);
      return 1;
    }
    if (!arrived && await hasPost(here, askId)) {
      arrived = true;
      print("the ask reached this node");
    }
    const runs = status.runs;
    const current = runs?.current && runs.current.startedAt >= postedAt - 1000
      ? runs.current
      : undefined;
    if (runId === undefined && current !== undefined) {
      runId = current.id;
      print(`agent woke: run ${runId} started (\`wats agent logs -f\` follows it)`);
    }
    const last = runs?.last;
    if (last !== undefined && last.startedAt >= postedAt - 1000 && current === undefined) {
      if (runId === undefined) {
        runId = last.id;
        print(`agent woke: run ${runId} started`);
      }
      if (last.id === runId && !runEnded) {
        runEnded = true;
        print(`run ${runId} ended: ${last.status}`);
      }
    }
    const wait = arrived && runId === undefined ? whyRunsWait(status) : undefined;
    if (wait !== undefined && wait !== toldWait) {
      toldWait = wait;
      print(`the agent has not woken yet: ${wait}`);
    }
    const answer = await replyTo(there, askId);
    if (answer !== undefined) {
      print("the answer arrived on the throwaway node:");
      print(formatPost(answer));
      return 0;
    }
    if (runEnded && !(await repliedHere(here, askId))) {
      // The run may have held its answer after this turn's look at the drafts.
      const late = await heldDraft(here, askId);
      if (late !== undefined) return heldForReview(late);
      print(
        `the run ended without answering the ask: \`wats agent logs --run ${runId}\` shows why`,
      );
      return 1;
    }
    if (Date.now() >= deadline) {
      print(
        `no answer within ${formatDuration(timeoutMs)}: ` +
          (arrived
            ? runId === undefined
              ? `the agent has not woken yet: ${whyRunsWait(status) ?? NO_REASON}`
              : `run ${runId} is still going (\`wats agent logs -f\`)`
            : "the ask has not reached this node"),
      );
      return 1;
    }
    await sleep(POLL_MS, ctx.signal);
  }
  return stopped();
}

/** What the timeout says when the node shows nothing holding the run back. */
const NO_REASON = "nothing holds its runs back, so agent.every still debounces it " +
  "(`wats config get agent.every`), or the routing kept the ask from it (agent.caps_match = " +
  "all with --caps, or agent.open_asks = false for an open ask)";

/** Why the agent's runs wait, from the node's status; undefined when nothing holds them. */
export function whyRunsWait(status: NodeStatus): string | undefined {
  const p = status.pauses;
  const at = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
  if (p?.budget) return `runs are paused: ${p.budget.reason}; they resume at ${at(p.budget.until)}`;
  if (p?.hourlyCap) {
    return `the hourly cap is reached (agent.max_runs_per_hour = ${p.hourlyCap.max}); the next ` +
      `run may start at ${at(p.hourlyCap.until)}`;
  }
  const retry = p?.retrying?.[0];
  if (retry) {
    return `a run that could not act is tried again at ${at(retry.at)} (try ${retry.tries + 1} ` +
      `of ${retry.of}; it ended: ${retry.error})`;
  }
  if (p?.claimed && p.claimed.count > 0) {
    return `another agent claimed the ask (\`wats status\` lists the claims)`;
  }
  return undefined;
}

/**
 * Why this node's agent would not wake for the ask `args` describe, judged from
 * the agents this node knows (its own agent's presence, with its caps), before
 * anything starts; undefined when it would, or when the node does not know its
 * own agent yet.
 */
async function routingRefusal(here: DaemonSession, args: TryArgs): Promise<string | undefined> {
  if (args.to === undefined && args.caps === undefined) return undefined;
  const mine = (await callData<{ agents: KnownAgent[] }>(here, "agents")).agents
    .filter((a) => a.local);
  if (mine.length === 0) return undefined;
  const names = mine.map((a) => a.npub).join(", ");
  if (args.to !== undefined) {
    const addressed = (await callData<{ agents: KnownAgent[] }>(here, "agents", { to: args.to }))
      .agents.filter((a) => a.local);
    if (addressed.length > 0) return undefined;
    return `--to names no agent of this node, so the ask would wake none here: give ` +
      `--to ${mine[0]!.npub}, or leave --to out (this node's agent: ${names})`;
  }
  const caps = args.caps ?? [];
  if (mine.some((a) => a.caps.some((c) => caps.includes(c)))) return undefined;
  const held = [...new Set(mine.flatMap((a) => a.caps))];
  return `--caps ${caps.join(",")}: this node's agent holds ${
    held.length > 0 ? `caps ${held.join(", ")}` : "no caps (agent.caps is empty)"
  }, and an ask naming only caps it lacks never wakes it: use --caps ${
    held[0] ?? "…"
  }, leave --caps out, or add the cap with \`wats config set agent.caps …\``;
}

/** Says where the held answer is and how to see and send it; the exit code. */
function heldForReview(draft: PendingDraft): number {
  print(
    `the agent answered, and its answer is held for review on this node (agent.review): ` +
      `\`wats agent pending show ${draft.id}\` shows it, \`wats agent approve ${draft.id}\` ` +
      `sends it (or the dashboard's review page)`,
  );
  return 1;
}

/** The draft held for review that replies to `askId`, if any. */
async function heldDraft(here: DaemonSession, askId: string): Promise<PendingDraft | undefined> {
  const { drafts } = await callData<{ drafts: PendingDraft[] }>(here, "pending");
  return drafts.find((d) => d.parent === askId || (d.thread === askId && d.kind !== "permission"));
}

/** What Ctrl-C ends with (the caller's `finally` stops the second node). */
function stopped(): number {
  print("stopped: the throwaway node is being removed");
  return 130;
}

/** True when `id` is stored on the node of `session`. */
async function hasPost(session: DaemonSession, id: string): Promise<boolean> {
  try {
    await callText(session, "thread", { id, limit: 1 });
    return true;
  } catch (err) {
    if (err instanceof WatsError) return false;
    throw err;
  }
}

/** The first reply to `askId` by another author, as the node of `session` has it. */
async function replyTo(session: DaemonSession, askId: string): Promise<PostView | undefined> {
  let data: { posts: PostView[] };
  try {
    data = await callData<{ posts: PostView[] }>(session, "thread", { id: askId });
  } catch (err) {
    if (err instanceof WatsError) return undefined;
    throw err;
  }
  const ask = data.posts.find((p) => p.id === askId);
  return data.posts.find((p) => p.parent === askId && p.author !== ask?.author);
}

/** True when this node has a reply to `askId` (then it is on its way to the second node). */
async function repliedHere(session: DaemonSession, askId: string): Promise<boolean> {
  return (await replyTo(session, askId)) !== undefined;
}

/**
 * Connects to the second node's socket once it serves; fails if the node exits
 * first; undefined when stopped meanwhile.
 */
async function waitForSocket(
  socket: string,
  node: Deno.ChildProcess,
  stderr: () => string,
  signal: AbortSignal,
): Promise<DaemonSession | undefined> {
  let exited = false;
  node.status.then(() => exited = true);
  while (!signal.aborted) {
    if (exited) {
      const said = stderr().trim().split("\n").filter((l) => l !== "").at(-1);
      throw new WatsError(
        "try.node_failed",
        `the throwaway node stopped before it served${said ? `: ${said}` : ""}`,
      );
    }
    try {
      return await connectDaemon(socket, TRY_PROFILE, { data: true });
    } catch {
      await sleep(100, signal);
    }
  }
  return undefined;
}

/** Keeps what a stream says (for the error when the second node fails). */
function collect(stream: ReadableStream<Uint8Array>): () => string {
  let text = "";
  (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) text = (text + decoder.decode(chunk)).slice(-4000);
  })().catch(() => {});
  return () => text;
}

/** Stops the second node and waits for it (SIGKILL if it does not end). */
async function stop(node: Deno.ChildProcess): Promise<void> {
  try {
    node.kill("SIGTERM");
  } catch { /* already ended */ }
  let timer: ReturnType<typeof setTimeout> | undefined;
  const ended = await Promise.race([
    node.status.then(() => true),
    new Promise<false>((r) => timer = setTimeout(() => r(false), STOP_MS)),
  ]);
  clearTimeout(timer);
  if (!ended) {
    try {
      node.kill("SIGKILL");
    } catch { /* ended meanwhile */ }
    await node.status;
  }
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
