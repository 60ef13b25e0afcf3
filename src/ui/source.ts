/**
 * Where the dashboard's data comes from: the running daemon over mcp.sock (its
 * status, posts, and every operation — approve, reject, halt, resume — exactly
 * as `wats agent approve/reject`, `wats guardian halt` and `wats resume` send
 * them, and the person's own posts as `wats mcp` sends them: the session says
 * no profile, so it speaks for the node's person, never for the agent), and the agent's files in the data dir (runs, transcripts, held
 * drafts), read only. The one file written is config.toml, when a person
 * confirms "allow always" (src/node/policy_rule.ts).
 *
 * @module
 */

import type { DataPaths } from "../config/paths.ts";
import type { AskState, NodeStatus, PostView } from "../contracts/views.ts";
import type { WorkDetail, WorksPage } from "../contracts/works.ts";
import type { ControlRequest } from "../contracts/session.ts";
import { type HeldDraft, ReviewQueue } from "../node/review_queue.ts";
import type { RunIndexEntry } from "../contracts/runs.ts";
import { Transcripts } from "../runner/transcripts.ts";
import { readSpend, type SpendItem } from "../runner/spend_figures.ts";
import { addAllowRule } from "../node/policy_rule.ts";
import {
  callData,
  callText,
  connectDaemon,
  type DaemonSession,
  NoDaemonError,
  sendControl,
} from "../mcp/socket_client.ts";

/** A page of the feed, newest first. */
export interface PostsPage {
  posts: PostView[];
  /** The seq to pass as `before` for the next (older) page; absent on the last page. */
  older?: number;
  /** The newest seq in the store. */
  newest: number;
}

/** A thread as the daemon shows it. */
export interface ThreadView {
  root: string;
  posts: PostView[];
  /** True when older replies were left out. */
  cut: boolean;
  /** What became of the thread's ask, when its first post is one (docs/asks.md). */
  askState?: AskState;
}

/** The "New work" form, as the daemon's `work_new` takes it. */
export interface NewWorkRequest {
  /** Empty: the one enabled harness. */
  harness: string;
  checkout: string;
  /** The work's name (`fix-login`). */
  work: string;
  task: string;
}

/** What the dashboard reads and asks. */
export interface UiSource {
  /** The node's status; null when no daemon answers. */
  status(): Promise<NodeStatus | null>;
  posts(before: number | undefined, limit: number): Promise<PostsPage>;
  search(query: string, limit: number): Promise<PostView[]>;
  thread(id: string): Promise<ThreadView>;
  runs(): RunIndexEntry[];
  /** The ids of every transcript on disk, finished or not. */
  transcriptIds(): string[];
  transcript(id: string): string[];
  drafts(): HeldDraft[];
  /** A page of coding agents' works, newest first, as `wats work list` asks the daemon. */
  works(page: number): Promise<WorksPage>;
  /** One work, whole (`wats work show`). */
  work(id: string): Promise<WorkDetail>;
  /** `head`: the head the page showed; the daemon refuses if the work moved past it. */
  workMerge(id: string, head?: string): Promise<string>;
  workPush(id: string, draftPr: boolean, head?: string): Promise<string>;
  /** Sends the work back: `text` becomes the next call's task, about `file` (and `line`) if given. */
  workSend(id: string, text: string, file?: string, line?: number): Promise<string>;
  workDiscard(id: string, head?: string): Promise<string>;
  /** Starts a new work with the person's task, as the heartbeat agent's harness tool would. */
  workNew(req: NewWorkRequest): Promise<string>;
  /**
   * Adds `rule` to policy.allow in config.toml (the person confirmed it on the
   * page): a safety change until `wats config ack`. Says what was written.
   */
  allowRule(rule: string): Promise<string>;
  /** This month's spend and the older runs the index holds (src/runner/spend_figures.ts). */
  spend(now: number): SpendItem[];
  approve(id: string, text?: string): Promise<string>;
  reject(id: string, reason: string): Promise<string>;
  halt(reason: string): Promise<string>;
  resume(): Promise<string>;
  /**
   * Posts as the person's profile, of `kind` (`ask`, `answer`, …) with its
   * arguments, through the tool `wats mcp` would use (`ask`, or `post` with the
   * kind): never as the agent.
   */
  post(kind: string, args: Record<string, unknown>): Promise<string>;
}

/**
 * The real source: one MCP session with the daemon, opened when first needed
 * and opened again after the daemon restarted. Requires the socket grants and
 * read of the agent dir; "allow always" writes config.toml.
 */
export class DaemonSource implements UiSource {
  readonly #paths: DataPaths;
  readonly #transcripts: Transcripts;
  #session: Promise<DaemonSession> | undefined;
  #runs: { key: string; value: RunIndexEntry[] } | undefined;
  #ids: { key: string; value: string[] } | undefined;

  readonly #who: { HOME?: string; user: string };

  /** `who`: HOME and the OS user, as config.toml is read with them (`wats config`). */
  constructor(paths: DataPaths, who: { HOME?: string; user: string } = { user: "" }) {
    this.#paths = paths;
    this.#who = who;
    this.#transcripts = new Transcripts({ runsDir: paths.runsDir, runsIndex: paths.runsIndex });
  }

  async status(): Promise<NodeStatus | null> {
    try {
      return await this.#call<NodeStatus>("status", {});
    } catch (err) {
      if (err instanceof NoDaemonError) return null;
      throw err;
    }
  }

  async posts(before: number | undefined, limit: number): Promise<PostsPage> {
    // The feed tool pages upward from a cursor; a page ending at `before` starts
    // `limit` seqs below it (seqs only grow, so a gap only shortens a page).
    const newest = (await this.#call<{ cursor: number }>("feed", {
      since: Number.MAX_SAFE_INTEGER,
      limit: 1,
    })).cursor;
    const top = Math.min(before ?? newest + 1, newest + 1);
    const since = Math.max(0, top - 1 - limit);
    const got = await this.#call<{ posts: PostView[] }>("feed", { since, limit });
    const posts = got.posts.filter((p) => p.seq < top).reverse();
    return { posts, newest, ...(since > 0 ? { older: since + 1 } : {}) };
  }

  async search(query: string, limit: number): Promise<PostView[]> {
    return (await this.#call<{ posts: PostView[] }>("search", { query, limit })).posts;
  }

  thread(id: string): Promise<ThreadView> {
    return this.#call<ThreadView>("thread", { id });
  }

  runs(): RunIndexEntry[] {
    // The runner appends to the index; unchanged size and mtime mean the same runs.
    const key = statKey(this.#paths.runsIndex);
    if (this.#runs?.key !== key) this.#runs = { key, value: this.#transcripts.index() };
    return this.#runs.value;
  }

  transcriptIds(): string[] {
    const key = statKey(this.#paths.runsDir);
    if (this.#ids?.key !== key) this.#ids = { key, value: this.#transcripts.transcriptIds() };
    return this.#ids.value;
  }

  transcript(id: string): string[] {
    return this.#transcripts.read(id);
  }

  drafts(): HeldDraft[] {
    return new ReviewQueue({
      dir: this.#paths.pendingDir,
      rejectionsFile: `${this.#paths.agentDir}/rejections.jsonl`,
      ttlMs: Infinity,
      now: Date.now,
      warn: () => {},
    }).read();
  }

  async approve(id: string, text?: string): Promise<string> {
    const s = await this.#open();
    return await callText(s, "approve", { id, ...(text !== undefined ? { text } : {}) });
  }

  async reject(id: string, reason: string): Promise<string> {
    return await callText(await this.#open(), "reject", { id, reason });
  }

  async post(kind: string, args: Record<string, unknown>): Promise<string> {
    const session = await this.#open();
    return kind === "ask"
      ? await callText(session, "ask", args)
      : await callText(session, "post", { kind, ...args });
  }

  halt(reason: string): Promise<string> {
    return sendControl(this.#paths.socket, { wats: "control", op: "halt", reason });
  }

  resume(): Promise<string> {
    return sendControl(this.#paths.socket, { wats: "control", op: "resume" });
  }

  async works(page: number): Promise<WorksPage> {
    return JSON.parse(await this.#control({ op: "work_list", page })) as WorksPage;
  }

  async work(id: string): Promise<WorkDetail> {
    return JSON.parse(await this.#control({ op: "work_show", work: id })) as WorkDetail;
  }

  workMerge(id: string, head?: string): Promise<string> {
    return this.#control({ op: "work_merge", work: id, ...(head ? { head } : {}) });
  }

  workPush(id: string, draftPr: boolean, head?: string): Promise<string> {
    return this.#control({ op: "work_push", work: id, draftPr, ...(head ? { head } : {}) });
  }

  workSend(id: string, text: string, file?: string, line?: number): Promise<string> {
    return this.#control({
      op: "work_send",
      work: id,
      text,
      ...(file !== undefined ? { file } : {}),
      ...(line !== undefined ? { line } : {}),
    });
  }

  workDiscard(id: string, head?: string): Promise<string> {
    return this.#control({ op: "work_discard", work: id, ...(head ? { head } : {}) });
  }

  workNew(req: NewWorkRequest): Promise<string> {
    return this.#control({
      op: "work_new",
      work: req.work,
      text: req.task,
      checkout: req.checkout,
      ...(req.harness !== "" ? { harness: req.harness } : {}),
    });
  }

  allowRule(rule: string): Promise<string> {
    return addAllowRule(this.#paths.config, rule, this.#who);
  }

  spend(now: number): SpendItem[] {
    return readSpend(this.#paths, now);
  }

  /** Ends the session with the daemon. */
  async close(): Promise<void> {
    const s = this.#session;
    this.#session = undefined;
    if (s) await (await s.catch(() => undefined))?.close().catch(() => {});
  }

  /**
   * One control line, as `wats work` sends it. A daemon that does not know the
   * op answers a refusal, which reaches the page as its message.
   */
  #control(req: Omit<ControlRequest, "wats">): Promise<string> {
    return sendControl(this.#paths.socket, { wats: "control", ...req });
  }

  async #call<T>(name: string, args: Record<string, unknown>): Promise<T> {
    try {
      return await callData<T>(await this.#open(), name, args);
    } catch (err) {
      if (!(err instanceof Error) || err.name === "WatsError") throw err;
      // The daemon restarted under us: one new session, then give up.
      await this.close();
      return await callData<T>(await this.#open(), name, args);
    }
  }

  #open(): Promise<DaemonSession> {
    this.#session ??= connectDaemon(this.#paths.socket, undefined, { data: true });
    const s = this.#session;
    s.catch(() => {
      if (this.#session === s) this.#session = undefined;
    });
    return s;
  }
}

/** Size and modification time of `path` ("" when absent): what a cached read depends on. */
function statKey(path: string): string {
  try {
    const st = Deno.statSync(path);
    return `${st.size}:${st.mtime?.getTime() ?? 0}`;
  } catch {
    return "";
  }
}
