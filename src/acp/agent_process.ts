/**
 * How an ACP agent's process is started and ended: the default
 * {@linkcode Connect} of src/acp/client.ts. What the real agents need,
 * measured (shared/docs/harness_facts.md, "ACP agents"):
 *
 * - `IS_SANDBOX` is dropped from its environment: as root it makes Claude's
 *   `session/new` fail (`bypass_root`).
 * - Closing the ACP connection does not close the agent's stdin: ending it
 *   closes stdin, then sends SIGTERM after a grace period. Stderr is always drained.
 *
 * @module
 */

import type { HarnessConfig } from "../config/acp_tables.ts";
import type { AgentLink, SpawnOptions } from "./agent_link.ts";

/** How long the agent gets to exit after its stdin closes, before SIGTERM and SIGKILL. */
const STOP_GRACE_MS = 2_000;

/**
 * Spawns the harness's program (or `opts.command`, the same wrapped in the
 * OS sandbox) in `cwd`. Throws what `Deno.Command` throws.
 *
 * Requires `--allow-run` on the harness's command.
 */
export function spawnAgentProcess(
  harness: HarnessConfig,
  cwd: string,
  env: Record<string, string>,
  opts: SpawnOptions = {},
): AgentLink {
  const merged: Record<string, string> = {};
  // wats's own variables are none of the coding agent's business.
  for (const [k, v] of Object.entries(env)) if (!k.startsWith("WATS_")) merged[k] = v;
  Object.assign(merged, harness.env);
  delete merged.IS_SANDBOX;
  const child = new Deno.Command(opts.command?.program ?? harness.command, {
    args: opts.command?.args ?? harness.args,
    cwd,
    env: merged,
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
    detached: opts.detached ?? false,
  }).spawn();
  let stderr = "";
  (async () => {
    const dec = new TextDecoder();
    try {
      for await (const chunk of child.stderr) {
        stderr = (stderr + dec.decode(chunk, { stream: true })).slice(-4096);
      }
    } catch {
      // The process is gone.
    }
  })();
  // Our own writer on stdin, so end() can close it (the SDK never does).
  const stdin = child.stdin.getWriter();
  return {
    input: new WritableStream<Uint8Array>({ write: (chunk) => stdin.write(chunk) }),
    output: child.stdout,
    exited: child.status,
    pid: child.pid,
    stderrTail: () => stderr,
    end: async () => {
      try {
        await stdin.close();
      } catch {
        // Already closed: the process is gone.
      }
      for (const signal of ["SIGTERM", "SIGKILL"] as const) {
        let timer: ReturnType<typeof setTimeout> | undefined;
        const grace = new Promise<"late">((r) =>
          timer = setTimeout(() => r("late"), STOP_GRACE_MS)
        );
        const done = await Promise.race([child.status.then(() => "done" as const), grace]);
        clearTimeout(timer);
        if (done === "done") return;
        try {
          child.kill(signal);
        } catch {
          // Exited between the check and the kill.
        }
      }
      await child.status;
    },
  };
}
