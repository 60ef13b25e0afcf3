/**
 * The rooms of src/ as a test (docs/architecture.md §2 and §9): every import
 * goes down the ranks of tests/architecture/rooms.ts or stays in its room, no
 * files import each other in a circle, the command entries that parse untrusted
 * input or hold narrow grants reach no code that starts a process, and the
 * page's table is this table. Reads the module graph with `deno info --json`.
 */

import { ok } from "node:assert/strict";
import { roomOf, ROOMS, roomsTable } from "./rooms.ts";

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
    "src/net/verify_worker.ts",
    "src/store/",
    "the verify worker holds no permission and only checks signatures",
  ],
  [
    "src/net/verify_worker.ts",
    "src/net/ws_client.ts",
    "the verify worker gets events, not connections",
  ],
  [
    "src/net/verify_worker.ts",
    "src/net/relay_",
    "the verify worker gets events, not connections",
  ],
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
const NO_SPAWN_DIRS = [
  "src/contracts",
  "src/mcp",
  "src/store",
  "src/posts",
  "src/identity",
  "src/config",
  "src/ui",
];

/** What starts a process. */
const SPAWNS = /Deno\.Command|Deno\.run\b|node:child_process/;

Deno.test("nothing under src/contracts, src/mcp, src/store, src/posts, src/identity, src/config or src/ui spawns a process", async () => {
  for (const dir of NO_SPAWN_DIRS) {
    for await (const e of Deno.readDir(new URL(dir, root))) {
      if (!e.isFile || !e.name.endsWith(".ts")) continue;
      const text = await Deno.readTextFile(new URL(`${dir}/${e.name}`, root));
      ok(!SPAWNS.test(text), `${dir}/${e.name} spawns a process`);
    }
  }
});

/**
 * Every module main.ts loads before it runs (its imports that load at run time, followed):
 * the relay's own, since each model-only sandbox's agent waits for the relay
 * (`wats sandbox-relay`, docs/decisions/sandbox.md). The launcher is imported by URL only.
 */
const ENTRY_GRAPH = [
  "main.ts",
  "src/cli/sandbox_relay.ts",
  // Its error line goes through the CLI's output module (imports nothing).
  "src/cli/output.ts",
  "src/error_message.ts",
  "src/errors.ts",
  "src/io/write_all.ts",
  "src/safety/net_relay.ts",
  "src/safety/net_wire.ts",
];

Deno.test("main.ts loads only the relay's few modules before it runs, and of those only the relay starts a process", async () => {
  const edges = await edgesOf("main.ts");
  const modules = ["main.ts"];
  for (let i = 0; i < modules.length; i++) {
    for (const e of edges) {
      if (e.from === modules[i] && e.kind === "code" && !modules.includes(e.to)) modules.push(e.to);
    }
  }
  const extra = modules.filter((m) => !ENTRY_GRAPH.includes(m));
  ok(
    extra.length === 0,
    `main.ts loads ${extra.join(", ")} before any command runs: the relay inside each ` +
      "model-only sandbox waits for these; import the launcher's modules from the launcher",
  );
  for (const m of modules) {
    const text = await Deno.readTextFile(new URL(m, root));
    ok(!SPAWNS.test(text) || m === "src/safety/net_relay.ts", `${m} spawns a process`);
  }
});

/** One import: `code` when it loads at run time, `type` when only the checker reads it. */
interface Edge {
  from: string;
  to: string;
  kind: "code" | "type";
}

/** `deno info --json` of `entry`, run with the repository's config. */
async function info(entry: string): Promise<
  { modules: Array<{ specifier: string; dependencies?: Array<Record<string, unknown>> }> }
> {
  const r = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", "--config", new URL("deno.json", root).pathname, entry],
    cwd: root.pathname,
    stdout: "piped",
    stderr: "piped",
  }).output();
  ok(r.success, new TextDecoder().decode(r.stderr));
  return JSON.parse(new TextDecoder().decode(r.stdout));
}

/** A repository path for a module of this repository; the specifier itself otherwise. */
function localPath(specifier: string): string {
  return specifier.startsWith(root.href) ? specifier.slice(root.href.length) : specifier;
}

/** Every import of every module the graph of `entry` holds. */
async function edgesOf(entry: string): Promise<Edge[]> {
  const edges: Edge[] = [];
  for (const m of (await info(entry)).modules) {
    if (!m.specifier.startsWith(root.href)) continue;
    const from = localPath(m.specifier);
    for (const d of m.dependencies ?? []) {
      for (const kind of ["code", "type"] as const) {
        const to = (d[kind] as { specifier?: string } | undefined)?.specifier;
        if (to !== undefined) edges.push({ from, to: localPath(to), kind });
      }
    }
  }
  return edges;
}

/** Every .ts file under src/. */
async function srcFiles(): Promise<string[]> {
  const files: string[] = [];
  const walk = async (dir: string) => {
    for await (const e of Deno.readDir(new URL(dir, root))) {
      if (e.isDirectory) await walk(`${dir}/${e.name}`);
      else if (e.isFile && e.name.endsWith(".ts")) files.push(`${dir}/${e.name}`);
    }
  };
  await walk("src");
  return files.sort();
}

/** Every import of every module under src/, type-only imports included. */
async function srcEdges(): Promise<Edge[]> {
  // One entry importing every module, so one `deno info` sees the whole graph.
  const entry = await Deno.makeTempFile({ suffix: ".ts" });
  try {
    await Deno.writeTextFile(
      entry,
      (await srcFiles()).map((f) => `import type {} from "${new URL(f, root).href}";`).join("\n"),
    );
    return (await edgesOf(entry)).filter((e) => e.from.startsWith("src/"));
  } finally {
    await Deno.remove(entry);
  }
}

Deno.test("every file under src/ is in one room of the table", async () => {
  for (const f of await srcFiles()) {
    const rooms = ROOMS.filter((r) => roomOf(f) === r);
    ok(rooms.length === 1, `${f} is in no room: add its folder to tests/architecture/rooms.ts`);
  }
});

/**
 * The imports that break the table: to a higher rank, or to another room of
 * the same rank.
 */
function upward(edges: Edge[]): Edge[] {
  return edges.filter(({ from, to }) => {
    const a = roomOf(from);
    const b = roomOf(to);
    if (a === undefined || b === undefined || a === b) return false;
    return b.rank >= a.rank;
  });
}

Deno.test("every import under src/ goes down the ranks or stays in its room", async () => {
  const edges = await srcEdges();
  ok(edges.length > 100, "the module graph has edges");
  const bad = upward(edges).map(({ from, to }) =>
    `${from} (${roomOf(from)!.name}, rank ${roomOf(from)!.rank}) imports ${to} ` +
    `(${roomOf(to)!.name}, rank ${roomOf(to)!.rank})`
  );
  ok(
    bad.length === 0,
    `${bad.join("; ")}: move the shared piece down (src/contracts holds what rooms exchange) ` +
      "or change the table in tests/architecture/rooms.ts and docs/architecture.md",
  );
});

Deno.test("src/contracts imports nothing outside itself", async () => {
  const edges = await srcEdges();
  const bad = edges.filter((e) => e.from.startsWith("src/contracts/"))
    .filter((e) => !e.to.startsWith("src/contracts/"));
  ok(
    bad.length === 0,
    `${bad.map((e) => `${e.from} imports ${e.to}`).join("; ")}: contracts are plain shapes`,
  );
});

/** The strongly connected components of more than one file, and files importing themselves (Tarjan). */
function cycles(edges: readonly Pick<Edge, "from" | "to">[]): string[][] {
  const next = new Map<string, string[]>();
  for (const { from, to } of edges) next.set(from, [...(next.get(from) ?? []), to]);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || (next.get(v) ?? []).includes(v)) found.push(component.sort());
  };
  for (const v of next.keys()) if (!index.has(v)) visit(v);
  return found;
}

Deno.test("the cycle finder finds a circle of files and passes a chain", () => {
  const circle = cycles([
    { from: "a", to: "b" },
    { from: "b", to: "c" },
    { from: "c", to: "a" },
    { from: "c", to: "d" },
  ]);
  ok(JSON.stringify(circle) === JSON.stringify([["a", "b", "c"]]), JSON.stringify(circle));
  ok(cycles([{ from: "a", to: "b" }, { from: "b", to: "c" }]).length === 0, "a chain has no cycle");
});

Deno.test("no files under src/ import each other in a circle, type-only imports included", async () => {
  const found = cycles(
    (await srcEdges()).filter((e) => e.to.startsWith("src/")),
  );
  ok(
    found.length === 0,
    `files import each other in a circle: ${found.map((c) => `{${c.join(", ")}}`).join("; ")}; ` +
      "move what both need into a module below them",
  );
});

/**
 * Entries whose run-time import graph starts no process: [entry, the one module
 * it may reach that does, why]. Followed through `code` imports only, as they
 * load (type-only imports load nothing).
 */
const NO_SPAWN_GRAPHS: Array<[string, string | undefined, string]> = [
  [
    "src/workers/mcp_worker.ts",
    "src/cli/bridge_processes.ts",
    "the stdio bridge starts only its background node and `kill` (its run grant)",
  ],
  ["src/mcp/server.ts", undefined, "MCP handlers parse untrusted input"],
  ["src/workers/ui_worker.ts", undefined, "`wats ui` runs no program"],
  ["src/net/verify_worker.ts", undefined, "the verify worker holds no permission"],
];

/** The modules of this repository that `entry` loads at run time. */
async function loadedBy(entry: string): Promise<string[]> {
  const edges = (await edgesOf(new URL(entry, root).pathname)).filter((e) => e.kind === "code");
  const seen = new Set([entry]);
  const todo = [entry];
  while (todo.length > 0) {
    const m = todo.pop()!;
    for (const e of edges) {
      if (e.from === m && e.to.startsWith("src/") && !seen.has(e.to)) {
        seen.add(e.to);
        todo.push(e.to);
      }
    }
  }
  return [...seen];
}

for (const [entry, allowed, why] of NO_SPAWN_GRAPHS) {
  Deno.test(`nothing ${entry} loads starts a process${allowed ? ` but ${allowed}` : ""}`, async () => {
    const modules = await loadedBy(entry);
    ok(modules.length > 1, `${entry} loads modules`);
    const bad: string[] = [];
    for (const m of modules) {
      if (m === allowed) continue;
      if (SPAWNS.test(await Deno.readTextFile(new URL(m, root)))) bad.push(m);
    }
    ok(bad.length === 0, `${entry} loads ${bad.join(", ")}, which start processes: ${why}`);
    if (allowed !== undefined) ok(modules.includes(allowed), `${entry} no longer loads ${allowed}`);
  });
}

/** Each table row's cells, trimmed, so column padding (`deno fmt`) does not matter. */
function cells(table: string): string[][] {
  return table.trim().split("\n").filter((l) => !/^\|[\s:|-]+\|$/.test(l.trim()))
    .map((l) => l.trim().replace(/^\||\|$/g, "").split("|").map((c) => c.trim()));
}

Deno.test("docs/architecture.md shows the rooms table of tests/architecture/rooms.ts", async () => {
  const page = await Deno.readTextFile(new URL("docs/architecture.md", root));
  const m = page.match(/<!-- rooms:begin -->\n([\s\S]*?)\n<!-- rooms:end -->/);
  ok(m !== null, "docs/architecture.md has no <!-- rooms:begin --> … <!-- rooms:end --> block");
  ok(
    JSON.stringify(cells(m[1]!)) === JSON.stringify(cells(roomsTable())),
    `docs/architecture.md's rooms table differs from tests/architecture/rooms.ts; put this between the markers:\n${roomsTable()}`,
  );
});
