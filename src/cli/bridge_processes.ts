/**
 * The only two programs `wats mcp` starts: the background node it launches
 * when none answers, and `kill` to end its own run's process group when its
 * node went away (src/cli/mcp.ts says when). They live apart so the bridge's
 * import graph has exactly one module that can start a process, matching its
 * permission set (run: this program and `kill`); tests/architecture/imports_test.ts
 * holds it to that.
 *
 * Requires `--allow-run` on `self[0]` and on `kill`.
 *
 * @module
 */

/**
 * Starts `self … --data-dir DIR node --agent none --started-by-mcp` in its own
 * session; `exited` resolves with its exit code if it stops.
 */
export function startBackgroundNode(
  self: readonly string[],
  dataDir: string,
): { exited: Promise<number> } {
  const [command, ...args] = self;
  if (command === undefined) {
    throw new Error("the command that runs wats again is empty: pass its argv as self");
  }
  const child = new Deno.Command(command, {
    args: [...args, "--data-dir", dataDir, "node", "--agent", "none", "--started-by-mcp"],
    stdin: "null",
    stdout: "null",
    stderr: "null",
    // Its own session: the host stopping this bridge must not stop the node.
    detached: true,
  }).spawn();
  child.unref();
  return { exited: child.status.then((s) => s.code) };
}

/** Kills this process's own process group: `kill 0` signals the group of `kill` itself, which is ours. */
export async function killOwnGroup(): Promise<void> {
  await new Deno.Command("kill", {
    args: ["-s", "KILL", "0"],
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).output();
}
