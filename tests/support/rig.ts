/**
 * The e2e rig: a real daemon on its own data dir and HOME, with what the
 * end-to-end tests commonly need around it, torn down by `await using`
 * instead of a try/finally per test. Modelled on the MCP SDK's e2e helpers:
 * build the parts inline, wire them, assert.
 *
 * ```ts
 * await using mock = answeringMock();
 * await using rig = await nodeRig({ agent: { mock } });
 * const alice = await rig.mcp("alice");
 * await call(alice, "ask", { title: "Logs", text: "logrotate or journald?" });
 * const ended = await rig.waitEvent("run_ended");
 * ```
 *
 * - {@linkcode nodeRig} starts `wats node` and waits for its `started` event.
 * - {@linkcode tempDir} is a temp folder removed at the end of the scope.
 * - {@linkcode gitRepo} is a repository with one commit on `main`.
 *
 * @module
 */

import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { NodeEvent } from "../../src/contracts/node_events.ts";
import { git } from "../../src/acp/worktrees.ts";
import { type RunningWats, runWats, startWats, type WatsOptions, type WatsResult } from "./cli.ts";
import type { MockAnthropic } from "./mock_anthropic.ts";
import { agentEnv, mcpClient } from "./swarm.ts";

/**
 * The node event named `K`, with its fields typed where the union declares
 * them; an event the union does not (yet) name is a bag of unknown fields.
 */
export type EventOf<K extends string> = [Extract<NodeEvent, { event: K }>] extends [never]
  ? { event: K; [field: string]: unknown }
  : Extract<NodeEvent, { event: K }>;

/** The node event a stdout line carries, or undefined for any other line. */
export function eventOf(line: string): { event: string; [field: string]: unknown } | undefined {
  if (!line.startsWith("{")) return undefined;
  try {
    const v = JSON.parse(line);
    return typeof v?.event === "string" ? v : undefined;
  } catch {
    return undefined;
  }
}

/** A temp folder (real path, symlinks resolved) removed when its scope ends. */
export interface TempDir extends AsyncDisposable {
  path: string;
}

/** Makes a {@linkcode TempDir}: `await using root = tempDir("wats-acp-")`. */
export function tempDir(prefix = "wats-test-", dir?: string): TempDir {
  const path = Deno.realPathSync(Deno.makeTempDirSync({ prefix, ...(dir ? { dir } : {}) }));
  return {
    path,
    [Symbol.asyncDispose]: () => Deno.remove(path, { recursive: true }).catch(() => {}),
  };
}

/** Options of {@linkcode gitRepo}. */
export interface GitRepoOptions {
  /** Files of the first commit, by path; `{ "README.md": "the app\n" }` when unset. */
  files?: Record<string, string>;
  /** Symlinks of the first commit: link path → target. */
  symlinks?: Record<string, string>;
  /** Writes user.email/user.name into the repository's config (else only the commit has them). */
  identity?: boolean;
}

/**
 * Creates `dir` as a git repository on branch `main` with one commit ("first",
 * by T <t@example.org>) and returns `dir`. Requires `--allow-run=git`.
 */
export async function gitRepo(dir: string, opts: GitRepoOptions = {}): Promise<string> {
  Deno.mkdirSync(dir, { recursive: true });
  await git(["init", "--quiet", "-b", "main"], dir);
  if (opts.identity) {
    await git(["config", "user.email", "t@example.org"], dir);
    await git(["config", "user.name", "T"], dir);
  }
  const files = opts.files ?? { "README.md": "the app\n" };
  for (const [path, content] of Object.entries(files)) {
    Deno.writeTextFileSync(`${dir}/${path}`, content);
  }
  for (const [path, target] of Object.entries(opts.symlinks ?? {})) {
    Deno.symlinkSync(target, `${dir}/${path}`);
  }
  await git(["add", ...Object.keys(files), ...Object.keys(opts.symlinks ?? {})], dir);
  await git(
    ["-c", "user.email=t@example.org", "-c", "user.name=T", "commit", "--quiet", "-m", "first"],
    dir,
  );
  return dir;
}

/** `thing` with `await using` support: its `close()` runs when the scope ends (an MCP client). */
export function closing<T extends { close(): Promise<unknown> }>(thing: T): T & AsyncDisposable {
  return Object.assign(thing, { [Symbol.asyncDispose]: async () => void await thing.close() });
}

/** Reads a JSON-lines file (the runs index, a transcript) into its records. */
export function jsonLines(path: string): Record<string, unknown>[] {
  return Deno.readTextFileSync(path).split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l));
}

/** Options of {@linkcode nodeRig}. */
export interface NodeRigOptions {
  /** The data dir; unset: a fresh one, removed when the rig is disposed. */
  dataDir?: string;
  /** The HOME of the node and its MCP clients; unset: a fresh one, removed with the rig. */
  home?: string;
  /** Written to `<dataDir>/config.toml` before the node starts. */
  config?: string;
  /** Arguments after `wats --data-dir <dir> node`. */
  args?: string[];
  /** Extra environment variables of the node. */
  env?: Record<string, string>;
  /** The node's working directory; unset: the test process's. */
  cwd?: string;
  /**
   * The heartbeat agent: `--agent claude --agent-profile helper` driving the
   * real Claude CLI against `mock`, `settings` as WATS_* variables.
   * `agent.ignore_local` is off: in these tests the askers are profiles of the
   * same node.
   */
  agent?: { mock: MockAnthropic; settings?: Record<string, string> };
  /** How long to wait for the `started` event: a safety net, 90 s when unset. */
  startTimeoutMs?: number;
  /**
   * Start again while the node exits before `started`, for this long: a
   * restart right after SIGKILL may be refused while the dead daemon's lock
   * still looks held. Unset: no retry.
   */
  retryRefusedMs?: number;
}

/** A running node and what hangs off it; `await using` stops and removes it all. */
export interface NodeRig extends AsyncDisposable {
  dataDir: string;
  home: string;
  /** The daemon process (stdout lines, stderr, stop). */
  node: RunningWats;
  /** The node's `started` event. */
  started: EventOf<"started">;
  /**
   * An MCP client through a real `wats mcp --profile <profile>` (with `home`
   * as its HOME, the rig's when unset), closed with the rig.
   */
  mcp(profile: string, home?: string): Promise<Client>;
  /**
   * Reads the node's events until one named `name` (and satisfying `where`)
   * arrives, and returns it. Reads on from where the last wait stopped, so two
   * waits for `run_ended` return two runs.
   */
  waitEvent<K extends string>(
    name: K,
    opts?: { where?: (e: EventOf<K>) => boolean; timeoutMs?: number },
  ): Promise<EventOf<K>>;
  /** The events named `name` the node has printed so far. */
  events<K extends string>(name: K): EventOf<K>[];
  /** Runs `wats --data-dir <dataDir> <args>` with the rig's HOME to completion. */
  wats(args: string[], opts?: WatsOptions): Promise<WatsResult>;
  /** Stops the node (SIGTERM; see `RunningWats.stop`) and returns how it ended. */
  stop(signal?: Deno.Signal, graceMs?: number): Promise<WatsResult>;
}

/**
 * Starts `wats --data-dir <dir> node` and waits for its `started` event.
 * Requires `--allow-all` (it runs wats, git and the CLIs).
 */
export async function nodeRig(opts: NodeRigOptions = {}): Promise<NodeRig> {
  const until = Date.now() + (opts.retryRefusedMs ?? 0);
  for (;;) {
    const rig = await startRig(opts);
    if (typeof rig !== "string") return rig;
    if (Date.now() > until) throw new Error(`the node exited before it started: ${rig}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** One try of {@linkcode nodeRig}; when a retried node exits before `started`, its stderr. */
async function startRig(opts: NodeRigOptions): Promise<NodeRig | string> {
  const owned: string[] = [];
  const fresh = (prefix: string) => {
    const path = Deno.makeTempDirSync({ prefix });
    owned.push(path);
    return path;
  };
  const dataDir = opts.dataDir ?? fresh("wats-data-");
  const home = opts.home ?? fresh("wats-home-");
  if (opts.config !== undefined) Deno.writeTextFileSync(`${dataDir}/config.toml`, opts.config);
  const agentArgs = opts.agent ? ["--agent", "claude", "--agent-profile", "helper"] : [];
  const env = opts.agent
    ? agentEnv(opts.agent.mock, {
      WATS_AGENT_IGNORE_LOCAL: "false",
      ...opts.agent.settings,
      ...opts.env,
    })
    : opts.env;
  const node = startWats(["--data-dir", dataDir, "node", ...agentArgs, ...(opts.args ?? [])], {
    home,
    ...(env ? { env } : {}),
    ...(opts.cwd ? { cwd: opts.cwd } : {}),
  });
  const clients: Client[] = [];
  const dispose = async () => {
    // A client whose node was killed may fail to close: the test has its answer by then.
    for (const c of clients.reverse()) await c.close().catch(() => {});
    await node.stop();
    for (const path of owned) await Deno.remove(path, { recursive: true }).catch(() => {});
  };
  const waitEvent = async <K extends string>(
    name: K,
    o: { where?: (e: EventOf<K>) => boolean; timeoutMs?: number } = {},
  ): Promise<EventOf<K>> => {
    const line = await node.waitForLine((l) => {
      const e = eventOf(l);
      return e?.event === name && (o.where?.(e as EventOf<K>) ?? true);
    }, o.timeoutMs ?? 120_000);
    return eventOf(line) as EventOf<K>;
  };
  let started: EventOf<"started"> | undefined;
  try {
    started = await waitEvent("started", { timeoutMs: opts.startTimeoutMs ?? 90_000 }).catch(
      async (err) => {
        // Stdout closes as the node exits; a retried start lets that exit decide.
        if (opts.retryRefusedMs === undefined || !/stdout closed/.test(String(err))) throw err;
        await node.process.status;
        return undefined;
      },
    );
  } catch (err) {
    await dispose();
    throw err;
  }
  if (started === undefined) {
    await dispose();
    return node.stderr();
  }
  return {
    dataDir,
    home,
    node,
    started,
    async mcp(profile, clientHome = home) {
      const c = await mcpClient(dataDir, profile, clientHome);
      clients.push(c);
      return c;
    },
    waitEvent,
    events: <K extends string>(name: K) =>
      node.stdoutLines.map(eventOf).filter((e) => e?.event === name) as EventOf<K>[],
    wats: (args, o = {}) => runWats(["--data-dir", dataDir, ...args], { home, ...o }),
    stop: (signal, graceMs) => node.stop(signal, graceMs),
    [Symbol.asyncDispose]: dispose,
  };
}
