/**
 * Starting a harness process so that the whole tree can be killed.
 *
 * The child is spawned `detached`, which makes Deno call `setsid()` in it: it
 * leads a new session and process group whose id is its pid, and every process
 * it starts (the MCP server, shells) joins that group unless it leaves on
 * purpose. Killing `-pid` then reaches them all. `kill()` sends SIGTERM to the
 * group, then SIGKILL after a grace period if the child has not exited; when the
 * child exits (killed or not), whatever is left in its group gets SIGKILL. (Deno
 * has no `setpgid`; `pkill -P` would race with processes being started.)
 *
 * The process starts from a cleared environment holding exactly `env`: a run's environment is an
 * allowlist built by the daemon (src/contracts/run_env.ts), never whatever the daemon was started with.
 *
 * Requires `--allow-run` for the program.
 *
 * @module
 */

import { HarnessError } from "../errors.ts";
import type { ProcessStatus, RunningProcess } from "./harness.ts";

/** What to run. */
export interface SpawnRequest {
  program: string;
  args: string[];
  /** The whole environment of the process (nothing is inherited). */
  env: Record<string, string>;
  cwd: string;
  /** Written to stdin, which is then closed. */
  stdin: string;
}

/** Starts a process; injected so the runner is tested without real processes. */
export type SpawnFn = (req: SpawnRequest) => RunningProcess;

/** Options of `spawnProcessGroup`. */
export interface SpawnOptions {
  /** Between SIGTERM and SIGKILL; 5 s when unset. */
  graceMs?: number;
}

const STDERR_TAIL = 4096;

/**
 * Spawns `req` in its own process group (see the module doc).
 *
 * @throws {HarnessError} code `harness.not_found` when the program is missing.
 */
export function spawnProcessGroup(req: SpawnRequest, opts: SpawnOptions = {}): RunningProcess {
  const graceMs = opts.graceMs ?? 5000;
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(req.program, {
      args: req.args,
      cwd: req.cwd,
      env: req.env,
      clearEnv: true,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
      detached: true,
    }).spawn();
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) {
      throw new HarnessError(
        "harness.not_found",
        `Cannot start ${req.program}: it is not on PATH (or ${req.cwd} does not exist). ` +
          `Install it, or check agent.runtime.`,
        { cause: err },
      );
    }
    throw new HarnessError("harness.spawn", `Cannot start ${req.program}: ${err}`, { cause: err });
  }
  const pid = child.pid;
  const status = child.status.then((s): ProcessStatus => ({
    code: s.signal === null ? s.code : null,
    signal: s.signal,
  }));

  const writer = child.stdin.getWriter();
  writer.write(new TextEncoder().encode(req.stdin))
    .then(() => writer.close())
    .catch(() => {/* the process exited before reading its prompt; its status says why */});

  let tail = "";
  (async () => {
    const dec = new TextDecoder();
    try {
      for await (const chunk of child.stderr) {
        tail = (tail + dec.decode(chunk, { stream: true })).slice(-STDERR_TAIL);
      }
    } catch { /* the stream ends with the process */ }
  })();

  const signalGroup = (sig: Deno.Signal) => signalProcessGroup(pid, sig);
  // Whatever the leader left in its group dies with it: a run's processes never
  // outlive the run, and no straggler keeps stdout open.
  status.then(() => signalGroup("SIGKILL"));
  let killing = false;
  return {
    pid,
    lines: readLines(child.stdout),
    status,
    stderrTail: () => tail,
    kill() {
      if (killing) return;
      killing = true;
      signalGroup("SIGTERM");
      // A leader that ignores SIGTERM gets SIGKILL after the grace period.
      const t = setTimeout(() => signalGroup("SIGKILL"), graceMs);
      status.then(() => clearTimeout(t));
    },
  };
}

/** The program the daemon may run to signal a process group (see `permissions.ts`). */
export const KILL_PROGRAM = "kill";

/**
 * Sends `sig` to process group `pgid` with the `kill` program; resolves when it
 * was sent (or the group was gone). Requires `--allow-run` for `kill`.
 *
 * Never `Deno.kill(-pgid)`: signalling a group needs unrestricted run
 * permission, which no Worker holds, and at a terminal without `--no-prompt`
 * Deno asks the person instead of throwing, freezing the daemon until someone
 * answers (docs/decisions/node.md "The daemon may run kill").
 */
export async function signalProcessGroup(pgid: number, sig: Deno.Signal): Promise<void> {
  try {
    await new Deno.Command(KILL_PROGRAM, {
      args: ["-s", sig.replace(/^SIG/, ""), "--", `-${pgid}`],
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).output();
  } catch {
    // No kill program, or not permitted, or the group is gone already.
  }
}

/** Splits a byte stream into lines. */
export async function* readLines(stream: ReadableStream<Uint8Array>): AsyncIterable<string> {
  const dec = new TextDecoder();
  let buf = "";
  for await (const chunk of stream) {
    buf += dec.decode(chunk, { stream: true });
    let nl: number;
    while ((nl = buf.indexOf("\n")) >= 0) {
      yield buf.slice(0, nl).replace(/\r$/, "");
      buf = buf.slice(nl + 1);
    }
  }
  buf += dec.decode();
  if (buf !== "") yield buf;
}

/** The output of a short command. */
export interface CommandOutput {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a short command to completion (e.g. `claude mcp get wats`); injected in tests. */
export type CommandRunner = (program: string, args: string[]) => Promise<CommandOutput>;

/**
 * Runs `program args` with stdin closed and returns its output.
 *
 * @throws {HarnessError} code `harness.not_found` when the program is missing.
 */
export const runCommand: CommandRunner = async (program, args) => {
  try {
    const out = await new Deno.Command(program, { args, stdin: "null" }).output();
    const dec = new TextDecoder();
    return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) {
      throw new HarnessError(
        "harness.not_found",
        `Cannot run ${program}: it is not on PATH. Install it, or check agent.runtime.`,
        { cause: err },
      );
    }
    throw err;
  }
};
