/**
 * The rooms of src/ and their ranks: the table docs/architecture.md shows
 * (between its `rooms:begin` and `rooms:end` markers) and
 * tests/architecture/imports_test.ts enforces. An import goes down the ranks,
 * or stays inside its room; two rooms of one rank do not import each other.
 * Change the table here, then paste {@linkcode roomsTable}'s output into the
 * page (the test prints it when they differ).
 *
 * @module
 */

/** One room: a folder of src/ (or the loose files at its top) with its rank. */
export interface Room {
  name: string;
  rank: number;
  /** Path prefixes under the repository root; `src/*.ts` means the files directly in src/. */
  paths: string[];
  /** What lives there. */
  holds: string;
  /** What a newcomer changes there. */
  touch: string;
}

/** Lowest first. */
export const ROOMS: readonly Room[] = [
  {
    name: "contracts",
    rank: 0,
    paths: ["src/contracts/"],
    holds: "types and small pure codecs several rooms share: session lines, coding-agent calls, " +
      "post and status views, node events, reject codes, run records",
    touch: "a shape two rooms exchange; imports nothing, not even packages",
  },
  {
    name: "leaves",
    rank: 1,
    paths: ["src/*.ts", "src/io/"],
    holds: "errors, log, duration, money, canonical JSON, version, prompts, write_all, author keys",
    touch: "a helper every room may use (one home per helper)",
  },
  {
    name: "posts",
    rank: 2,
    paths: ["src/posts/"],
    holds: "the wire format: kinds, build/sign/read a post, validate, verify, fence, formatPost",
    touch: "the protocol (docs/protocol.md)",
  },
  {
    name: "identity",
    rank: 2,
    paths: ["src/identity/"],
    holds: "the node secret and profile keys",
    touch: "key derivation",
  },
  {
    name: "config",
    rank: 2,
    paths: ["src/config/"],
    holds: "the settings schema, config.toml, precedence, paths",
    touch: "a setting: one row in schema.ts",
  },
  {
    name: "store",
    rank: 3,
    paths: ["src/store/"],
    holds: "node:sqlite: posts, tags, FTS5, outbox, cursors",
    touch: "a query or a migration",
  },
  {
    name: "safety",
    rank: 4,
    paths: ["src/safety/"],
    holds: "safety.json, notices, Claude settings, the bubblewrap sandbox",
    touch: "what an agent may not do (docs/safety.md)",
  },
  {
    name: "acp",
    rank: 5,
    paths: ["src/acp/"],
    holds: "coding agents over ACP: worktrees, the client, the policy, the sweep",
    touch: "how a coding agent's call runs and is judged (docs/acp.md)",
  },
  {
    name: "runner",
    rank: 6,
    paths: ["src/runner/"],
    holds: "wake rules, scheduler, budgets, loop detector, harnesses, transcripts",
    touch: "when and how the agent runs (docs/runner.md)",
  },
  {
    name: "mcp",
    rank: 6,
    paths: ["src/mcp/"],
    holds: "the MCP tools, the NodeService port, mcp.sock server and client",
    touch: "a tool (and tests/mcp/tool_allowlist_test.ts)",
  },
  {
    name: "net",
    rank: 6,
    paths: ["src/net/"],
    holds: "relay sync, the relay endpoint, ingest, the verify worker",
    touch: "how events reach and leave the node (docs/network.md)",
  },
  {
    name: "node",
    rank: 7,
    paths: ["src/node/"],
    holds: "the daemon: composes store, runner, ACP, service, socket and network",
    touch: "how the parts are wired",
  },
  {
    name: "ui",
    rank: 8,
    paths: ["src/ui/"],
    holds: "`wats ui`: pages and charts over the daemon's socket",
    touch: "a page (docs/ui.md)",
  },
  {
    name: "cli",
    rank: 9,
    paths: ["src/cli/"],
    holds: "the launcher, the permission table, one module per command",
    touch: "a command, its flags and its permission set",
  },
  {
    name: "workers",
    rank: 10,
    paths: ["src/workers/"],
    holds: "one Worker entry per command, started by the launcher",
    touch: "nothing but the entry of a new command",
  },
];

/** The room of a repository path under src/, or undefined. */
export function roomOf(path: string): Room | undefined {
  return ROOMS.find((r) =>
    r.paths.some((p) => p === "src/*.ts" ? /^src\/[^/]+\.ts$/.test(path) : path.startsWith(p))
  );
}

/** The table as docs/architecture.md shows it. */
export function roomsTable(): string {
  const rows = [...ROOMS].sort((a, b) => b.rank - a.rank || a.name.localeCompare(b.name));
  const lines = [
    "| rank | room | folder | holds | touch it for |",
    "| ---: | ---- | ------ | ----- | ------------ |",
    ...rows.map((r) =>
      `| ${r.rank} | ${r.name} | ${
        r.paths.map((p) => `\`${p}\``).join(", ")
      } | ${r.holds} | ${r.touch} |`
    ),
  ];
  return lines.join("\n");
}
