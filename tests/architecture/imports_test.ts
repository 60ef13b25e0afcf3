/**
 * Imports follow permissions (STYLE.md rule 2): modules that parse untrusted
 * input or run with narrow grants must not pull in code that spawns processes
 * or writes settings. Reads the module graph with `deno info --json`.
 */

import { ok } from "node:assert/strict";

const root = new URL("../../", import.meta.url);

async function graph(entry: string): Promise<string[]> {
  const r = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", new URL(entry, root).pathname],
    cwd: root.pathname,
    stdout: "piped",
    stderr: "piped",
  }).output();
  ok(r.success, new TextDecoder().decode(r.stderr));
  const info = JSON.parse(new TextDecoder().decode(r.stdout));
  return (info.modules as Array<{ specifier: string }>)
    .map((m) => m.specifier)
    .filter((s) => s.startsWith(root.href))
    .map((s) => s.slice(root.href.length));
}

/** [entry, forbidden path prefix, why]. */
const RULES: Array<[string, string, string]> = [
  ["src/workers/mcp_worker.ts", "src/runner/", "the stdio bridge must not carry the runner"],
  [
    "src/workers/mcp_worker.ts",
    "src/store/",
    "the bridge only passes bytes; the daemon owns the store",
  ],
  [
    "src/mcp/server.ts",
    "src/runner/",
    "MCP handlers parse untrusted input and must not reach code that spawns",
  ],
  ["src/mcp/server.ts", "src/store/", "MCP tools see the node only through NodeService"],
  ["src/mcp/socket_server.ts", "src/runner/", "MCP handlers must not reach code that spawns"],
  ["src/store/store.ts", "src/runner/", "the store does not know the runner"],
  ["src/store/store.ts", "src/mcp/", "the store does not know MCP"],
  ["src/workers/agent_worker.ts", "src/runner/spawn.ts", "`wats agent` only reads transcripts"],
  [
    "src/workers/agent_worker.ts",
    "src/runner/scheduler.ts",
    "`wats agent` only observes the runner",
  ],
  ["src/workers/agent_worker.ts", "src/store/", "`wats agent` has no grant on store.db"],
  ["src/workers/config_worker.ts", "src/node/", "`wats config` does not load the daemon"],
  ["src/workers/help_worker.ts", "src/node/", "help holds no permission and needs no daemon code"],
  [
    "src/workers/verify_worker.ts",
    "src/store/",
    "the verify worker holds no permission and only checks signatures",
  ],
  ["src/workers/verify_worker.ts", "src/net/", "the verify worker gets events, not connections"],
];

for (const [entry, forbidden, why] of RULES) {
  Deno.test(`${entry} does not import ${forbidden}`, async () => {
    let modules: string[];
    try {
      await Deno.stat(new URL(entry, root));
      modules = await graph(entry);
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) throw new Error(`${entry} is missing`);
      throw err;
    }
    const bad = modules.filter((m) => m.startsWith(forbidden));
    ok(bad.length === 0, `${entry} imports ${bad.join(", ")}: ${why}`);
  });
}

/** Source folders whose files must not spawn processes at all. */
const NO_SPAWN_DIRS = ["src/mcp", "src/store", "src/posts", "src/identity", "src/config"];

Deno.test("nothing under src/mcp, src/store, src/posts, src/identity or src/config spawns a process", async () => {
  for (const dir of NO_SPAWN_DIRS) {
    for await (const e of Deno.readDir(new URL(dir, root))) {
      if (!e.isFile || !e.name.endsWith(".ts")) continue;
      const text = await Deno.readTextFile(new URL(`${dir}/${e.name}`, root));
      ok(
        !/Deno\.Command|Deno\.run\b|node:child_process/.test(text),
        `${dir}/${e.name} spawns a process`,
      );
    }
  }
});
