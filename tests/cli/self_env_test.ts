/**
 * The launcher's `DENO_DIR` for the commands that run wats again (a sandbox's relay, a run's
 * `wats mcp`): the folder Deno itself picks for the same environment, asked of Deno.
 */

import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { selfEnv } from "../../src/cli/launcher.ts";

async function denoPicks(env: Record<string, string>, cwd: string): Promise<string> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json"],
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", ...env },
    clearEnv: true,
    cwd,
    stdout: "piped",
    stderr: "piped",
  }).output();
  return JSON.parse(new TextDecoder().decode(out.stdout)).denoDir;
}

Deno.test("from source, DENO_DIR is the cache folder Deno picks for the same environment", async () => {
  const cwd = await Deno.makeTempDir({ prefix: "wats-denodir-" });
  try {
    const cases: Record<string, string>[] = [
      { HOME: "/home/alice" },
      { HOME: "/home/alice", XDG_CACHE_HOME: "/var/cache/alice" },
      { HOME: "/home/alice", XDG_CACHE_HOME: "rel" },
      { HOME: "/home/alice", XDG_CACHE_HOME: "/x", DENO_DIR: "/opt/deno-cache" },
      { HOME: "/home/alice", DENO_DIR: "rel/d" },
    ];
    for (const env of cases) {
      assertEquals(
        selfEnv(env, Deno.build.os, cwd, false),
        { DENO_DIR: await denoPicks(env, cwd) },
        JSON.stringify(env),
      );
    }
    // A compiled wats carries its modules: nothing to find.
    assertEquals(selfEnv({ HOME: "/home/alice" }, Deno.build.os, cwd, true), {});
  } finally {
    await Deno.remove(cwd);
  }
});
