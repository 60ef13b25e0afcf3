/**
 * Imports follow permissions (docs/architecture.md §8): modules that parse untrusted
 * input or run with narrow grants must not pull in code that spawns processes
 * or writes settings. Imports run down the layers (docs/architecture.md §8): cli →
 * node → runner/net/mcp → store/posts/config. Reads the module graph with
 * `deno info --json`.
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
  ["src/workers/service_worker.ts", "src/node/", "`wats service` writes one file, no daemon code"],
  ["src/workers/service_worker.ts", "src/store/", "`wats service` has no grant on store.db"],
  [
    "src/workers/try_worker.ts",
    "src/node/",
    "`wats try` runs its throwaway node as a program, never the daemon's code",
  ],
  ["src/workers/try_worker.ts", "src/store/", "`wats try` sees both nodes only through MCP"],
  ["src/workers/ui_worker.ts", "src/runner/spawn.ts", "`wats ui` runs no program"],
  ["src/workers/ui_worker.ts", "src/runner/scheduler.ts", "`wats ui` only observes the runner"],
  ["src/workers/ui_worker.ts", "src/store/", "`wats ui` reads posts only through the daemon"],
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
const NO_SPAWN_DIRS = ["src/mcp", "src/store", "src/posts", "src/identity", "src/config", "src/ui"];

Deno.test("nothing under src/mcp, src/store, src/posts, src/identity, src/config or src/ui spawns a process", async () => {
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

/** Every import edge between this repository's modules under src/, type-only imports included. */
async function srcEdges(): Promise<Array<[string, string]>> {
  const files: string[] = [];
  const walk = async (dir: string) => {
    for await (const e of Deno.readDir(new URL(dir, root))) {
      if (e.isDirectory) await walk(`${dir}/${e.name}`);
      else if (e.isFile && e.name.endsWith(".ts")) files.push(`${dir}/${e.name}`);
    }
  };
  await walk("src");
  // One entry importing every module, so one `deno info` sees the whole graph.
  const entry = await Deno.makeTempFile({ suffix: ".ts" });
  try {
    await Deno.writeTextFile(
      entry,
      files.map((f) => `import type {} from "${new URL(f, root).href}";`).join("\n"),
    );
    const r = await new Deno.Command(Deno.execPath(), {
      args: ["info", "--json", "--config", new URL("deno.json", root).pathname, entry],
      cwd: root.pathname,
      stdout: "piped",
      stderr: "piped",
    }).output();
    ok(r.success, new TextDecoder().decode(r.stderr));
    const info = JSON.parse(new TextDecoder().decode(r.stdout));
    const local = (s: string | undefined) =>
      s?.startsWith(root.href) ? s.slice(root.href.length) : undefined;
    const edges: Array<[string, string]> = [];
    for (const m of info.modules as Array<{ specifier: string; dependencies?: unknown[] }>) {
      const from = local(m.specifier);
      if (!from) continue;
      for (const d of (m.dependencies ?? []) as Array<Record<string, { specifier?: string }>>) {
        for (const to of [local(d.code?.specifier), local(d.type?.specifier)]) {
          if (to) edges.push([from, to]);
        }
      }
    }
    return edges;
  } finally {
    await Deno.remove(entry);
  }
}

/** [importing folder, forbidden folder, why]: no module of the first imports one of the second. */
const LAYERS: Array<[string, string, string]> = [
  [
    "src/node/",
    "src/cli/",
    "the node is composed by the CLI, not the other way round; shared contracts live below both",
  ],
  [
    "src/net/",
    "src/node/",
    "the network is a part the node composes; the event contract is src/events.ts",
  ],
];

Deno.test("imports run down the layers: src/node does not import src/cli, src/net does not import src/node", async () => {
  const edges = await srcEdges();
  ok(edges.length > 0, "the module graph has edges");
  for (const [from, forbidden, why] of LAYERS) {
    const bad = edges.filter(([a, b]) => a.startsWith(from) && b.startsWith(forbidden));
    ok(
      bad.length === 0,
      `${bad.map(([a, b]) => `${a} imports ${b}`).join("; ")}: ${why}`,
    );
  }
});
