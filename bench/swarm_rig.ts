/**
 * What the swarm benches (network_wakes.ts, delivery.ts; budget_drill.ts its baseline) share: the agents' caps, the code
 * version of the baseline extracted with `git archive`, the stand-in `claude` on the daemons'
 * PATH, a daemon started and read line by line, and percentiles. The stand-ins share their wake
 * and bridge code too (stand_in_agent.mjs).
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import { LAUNCHER_FLAGS } from "../src/cli/permissions.ts";
import { DENO_JSON, MAIN_TS } from "../tests/support/cli.ts";

/** The caps of the swarm; agent i has `CAPS[i mod 4]` and, for even i, the next one. */
export const CAPS = ["rust", "go", "sql", "k8s"];

/** The caps of agent `i`: from 3 agents on, every cap has one. */
export function capsOf(i: number): string[] {
  const own = [CAPS[i % CAPS.length]!];
  if (i % 2 === 0) own.push(CAPS[(i + 1) % CAPS.length]!);
  return own;
}

/** The three kinds of ask a stream mixes. */
export type Category = "addressed" | "cap" | "open";

/** A code version the bench runs: its entry and its deno.json. */
export interface Version {
  name: string;
  main: string;
  config: string;
}

/** This tree, as a version. */
export const THIS_TREE: Version = { name: "this tree", main: MAIN_TS, config: DENO_JSON };

/** The arguments of `deno` that run `wats` of version `v`. */
export function watsArgs(v: Version): string[] {
  return ["run", ...LAUNCHER_FLAGS, "--quiet", "--config", v.config, v.main];
}

/** What a daemon of the baseline needs: its entry, its code and its config. */
const DAEMON_PATHS = ["main.ts", "src", "deno.json", "deno.lock", "HEARTBEAT.md"];

/**
 * The baseline's code: `before` when given (a checkout), else `commit`'s `paths` (by default
 * what a daemon needs) extracted with `git archive` into a temp dir, which `owned` says to
 * remove at the end.
 */
export async function baselineDir(
  o: { before?: string; commit: string; prefix: string; paths?: string[] },
): Promise<{ dir: string; owned: boolean }> {
  if (o.before) return { dir: o.before, owned: false };
  const dir = Deno.makeTempDirSync({ prefix: o.prefix });
  const repo = fileURLToPath(new URL("..", import.meta.url));
  const archive = new Deno.Command("git", {
    args: ["-C", repo, "archive", "--format=tar", o.commit, ...(o.paths ?? DAEMON_PATHS)],
    stdout: "piped",
  }).spawn();
  const tar = new Deno.Command("tar", { args: ["-x", "-C", dir], stdin: "piped" }).spawn();
  await archive.stdout.pipeTo(tar.stdin);
  const [a, t] = [await archive.status, await tar.status];
  if (!a.success || !t.success) {
    throw new Error(
      `error: could not extract ${o.commit} with git archive; ` +
        "pass --before DIR with a checkout of the code before",
    );
  }
  return { dir, owned: true };
}

/**
 * A temp dir holding `claude`, a shim that runs the stand-in agent `agent` (a Node script) where
 * it is, so its imports resolve beside it: first on a daemon's PATH, it is the runner's CLI.
 * Removed with `await using`.
 */
export function standInBin(agent: URL, prefix: string): { path: string } & AsyncDisposable {
  const path = Deno.makeTempDirSync({ prefix });
  Deno.writeTextFileSync(
    `${path}/claude`,
    `#!/bin/sh\nexec node ${JSON.stringify(fileURLToPath(agent))} "$@"\n`,
  );
  Deno.chmodSync(`${path}/claude`, 0o755);
  return {
    path,
    [Symbol.asyncDispose]: () => Deno.remove(path, { recursive: true }).catch(() => {}),
  };
}

/** `n` CPU hogs (`yes > /dev/null`), killed with `await using`. */
export function cpuHogs(n: number): AsyncDisposable {
  const hogs = Array.from(
    { length: n },
    () => new Deno.Command("yes", { stdout: "null", stderr: "null", stdin: "null" }).spawn(),
  );
  return {
    async [Symbol.asyncDispose]() {
      for (const h of hogs) {
        try {
          h.kill("SIGKILL");
        } catch { /* gone */ }
        await h.status;
      }
    },
  };
}

/**
 * Reads `child`'s stdout line by line, calling `onLine` for each with the time it came; resolves
 * when stdout closes.
 */
export function readLines(
  child: Deno.ChildProcess,
  onLine: (line: string, at: number) => void,
): Promise<void> {
  return readStream(child.stdout, onLine);
}

/** Reads `stream` line by line, calling `onLine` for each with the time it came. */
export async function readStream(
  stream: ReadableStream<Uint8Array>,
  onLine: (line: string, at: number) => void,
): Promise<void> {
  let rest = "";
  for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
    rest += chunk;
    let nl;
    while ((nl = rest.indexOf("\n")) >= 0) {
      const line = rest.slice(0, nl);
      rest = rest.slice(nl + 1);
      onLine(line, Date.now());
    }
  }
}

/** The `p` quantile of `xs` (nearest rank); NaN for none. */
export function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * p))] ?? NaN;
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
