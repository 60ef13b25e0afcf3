/**
 * The OS sandbox of every process wats starts for an agent that can run commands
 * (docs/decisions/sandbox.md): what it hides, what stays writable, and the
 * bubblewrap arguments (Linux) or sandbox-exec profile (macOS) that say so.
 *
 * Pure: which of the paths exist is learnt by `probeSandbox`
 * (src/safety/sandbox_probe.ts), which runs inside bubblewrap itself, so the
 * daemon needs no read grant on the secrets it hides.
 *
 * @module
 */

import type { SandboxMode } from "../config/schema.ts";

/**
 * The user's secrets hidden from every sandboxed agent, `~/` for the home
 * directory; `sandbox.hide` adds to it. An agent's own credential file
 * (`AGENT_STATE`) is the one exception, for the agent it belongs to.
 */
export const DEFAULT_HIDE: readonly string[] = [
  "~/.ssh",
  "~/.aws",
  "~/.gnupg",
  "~/.config/gh",
  "~/.netrc",
  "~/.docker",
  "~/.kube",
  "~/.git-credentials",
  "~/.config/git/credentials",
  "~/.npmrc",
  "~/.pypirc",
  "~/.config/gcloud",
  "~/.azure",
  "~/.claude/.credentials.json",
  "~/.codex/auth.json",
  // Sockets that hand out the user's keys or run programs outside the sandbox: the per-user
  // runtime dir (ssh and gpg agents, the session bus and its secret service), Docker, and
  // systemd's and the system bus's (as root, either starts a unit outside).
  "/run/user",
  "/run/docker.sock",
  "/run/systemd/private",
  "/run/dbus/system_bus_socket",
];

/**
 * The secrets the environment names: the ssh agent's socket (anywhere, such as
 * under /tmp or a keyring's folder).
 */
export function envHides(env: Record<string, string>): string[] {
  const sock = env.SSH_AUTH_SOCK;
  return sock?.startsWith("/") ? [sock] : [];
}

/** Which agent a process is, for the state it must keep writable. */
export type AgentKind = "claude" | "codex" | "other";

/**
 * The state an agent writes to talk to its model and keep its sessions, and
 * its own credential file (kept readable for it, hidden from the others).
 * Measured with claude-agent-acp 0.101.0 and codex-acp on Codex 0.171 (docs/harness_facts.md).
 */
export function agentState(
  kind: AgentKind,
  env: Record<string, string>,
  home: string,
): { writable: string[]; ownSecrets: string[] } {
  if (kind === "claude") {
    const dir = env.CLAUDE_CONFIG_DIR || `${home}/.claude`;
    // Without CLAUDE_CONFIG_DIR Claude keeps `.claude.json` beside its folder, in home.
    const json = env.CLAUDE_CONFIG_DIR ? `${dir}/.claude.json` : `${home}/.claude.json`;
    return { writable: [dir, json], ownSecrets: [`${dir}/.credentials.json`] };
  }
  if (kind === "codex") {
    const dir = env.CODEX_HOME || `${home}/.codex`;
    return { writable: [dir], ownSecrets: [`${dir}/auth.json`] };
  }
  return { writable: [], ownSecrets: [] };
}

/** The agent a command runs, by its program and arguments (an ACP adapter names its agent). */
export function agentKindOf(command: string, args: readonly string[]): AgentKind {
  const words = [command, ...args].join(" ");
  if (/claude/i.test(words)) return "claude";
  if (/codex/i.test(words)) return "codex";
  return "other";
}

/** `~/x` → `<home>/x`; other paths as they are. */
export function expandHome(path: string, home: string): string {
  return path === "~" ? home : path.startsWith("~/") ? `${home}/${path.slice(2)}` : path;
}

/** The hidden paths of `req`, absolute (a relative `sandbox.hide` entry names nothing). */
function hiddenPaths(req: SandboxRequest): string[] {
  return unique(req.hide.map((h) => expandHome(h, req.home))).filter((p) => p.startsWith("/"));
}

/** What one sandbox hides and opens, before the file system is asked. */
export interface SandboxRequest {
  /** The data dir: hidden whole. */
  dataDir: string;
  /** The user's home, for `~/`. */
  home: string;
  /** `DEFAULT_HIDE` plus `sandbox.hide`, `~/` allowed. */
  hide: readonly string[];
  /** Re-bound read-only where /tmp or the data dir would hide them (the checkout's git dir). */
  readable: readonly string[];
  /**
   * Re-bound writable over what is hidden or read-only: the call's worktree,
   * the parts of its git dir a commit writes, the agent's state.
   */
  writable: readonly string[];
  /** Hidden entries the agent itself needs to read (its own credential file). */
  keep?: readonly string[];
  /**
   * Files or folders bound at another path inside (a run's own socket where its `wats mcp`
   * looks for `mcp.sock`), writable; after the data dir is hidden, before the secrets.
   */
  binds?: readonly Bind[];
  /** The directory the process starts in. */
  cwd: string;
}

/** One path bound at another inside the sandbox. */
export interface Bind {
  /** The path outside (it must exist). */
  from: string;
  /** Where the sandbox sees it. */
  to: string;
}

/** A path that exists, and whether it is a folder. */
export type PathKind = "dir" | "file";

/** A sandbox with every path checked: what `bwrapArgs` and `seatbeltProfile` render. */
export interface SandboxPlan {
  dataDir: string;
  /** Folders under a tmpfs. */
  hiddenDirs: string[];
  /** Files under `/dev/null`. */
  hiddenFiles: string[];
  /** Bound read-only to themselves, before the writable ones. */
  readable: string[];
  /** Bound writable to themselves, in order. */
  writable: string[];
  /** Bound writable at another path, after `writable`. */
  binds: Bind[];
  cwd: string;
}

/** Every path `plan` needs to know the kind of (ask `probeSandbox`). */
export function pathsToProbe(req: SandboxRequest): string[] {
  return unique([
    ...hiddenPaths(req),
    ...req.readable,
    ...req.writable,
  ]);
}

/**
 * The plan of `req`, given the kind of each path that exists (`kinds`). A
 * missing path needs no hiding; a missing writable path is left out (bubblewrap
 * cannot bind what is not there).
 */
export function planSandbox(
  req: SandboxRequest,
  kinds: ReadonlyMap<string, PathKind>,
): SandboxPlan {
  const keep = new Set(req.keep ?? []);
  const hidden = hiddenPaths(req).filter((p) => !keep.has(p) && kinds.has(p));
  return {
    dataDir: req.dataDir,
    hiddenDirs: hidden.filter((p) => kinds.get(p) === "dir"),
    hiddenFiles: hidden.filter((p) => kinds.get(p) === "file"),
    readable: unique(req.readable).filter((p) => kinds.has(p)),
    writable: unique(req.writable).filter((p) => kinds.has(p)),
    binds: [...(req.binds ?? [])],
    cwd: req.cwd,
  };
}

/**
 * bubblewrap's arguments for `plan`, up to and including the `--` before the
 * program. The root is read-only; `/tmp` and the data dir are empty tmpfs; the
 * readable, then the writable paths are bound back next; the secrets are masked last, so a
 * writable folder never uncovers one. The agent's processes see only their own
 * pids (so no `/proc/<daemon>/root` path into the data dir), hold no
 * capability (root inside could otherwise unmount the tmpfs: measured), and
 * die with the sandbox.
 */
export function bwrapArgs(plan: SandboxPlan, programRoots: readonly string[] = []): string[] {
  return [
    "--ro-bind",
    "/",
    "/",
    "--dev",
    "/dev",
    "--proc",
    "/proc",
    "--tmpfs",
    "/tmp",
    // The programs' own folders under /tmp, read-only, before the data dir is hidden (it may lie
    // inside one of them).
    ...programRoots.flatMap((p) => ["--ro-bind-try", p, p]),
    "--tmpfs",
    plan.dataDir,
    ...plan.readable.flatMap((p) => ["--ro-bind", p, p]),
    ...plan.writable.flatMap((p) => ["--bind", p, p]),
    ...plan.binds.flatMap((b) => ["--bind", b.from, b.to]),
    ...plan.hiddenDirs.flatMap((p) => ["--tmpfs", p]),
    ...plan.hiddenFiles.flatMap((p) => ["--ro-bind", "/dev/null", p]),
    "--unshare-pid",
    "--die-with-parent",
    "--cap-drop",
    "ALL",
    // TMPDIR may name a folder the sandbox hides or keeps read-only.
    "--setenv",
    "TMPDIR",
    "/tmp",
    "--chdir",
    plan.cwd,
    "--",
  ];
}

/**
 * The sandbox-exec (Seatbelt) profile of `plan` for macOS: reads everywhere
 * but the data dir and the secrets, writes only to the writable paths and the
 * temp folders. Not tested on this project's Linux machines (docs/safety.md).
 */
export function seatbeltProfile(plan: SandboxPlan): string {
  const q = (p: string) => JSON.stringify(p);
  const hidden = [...plan.hiddenDirs.map((p) => `  (subpath ${q(p)})`)]
    .concat(plan.hiddenFiles.map((p) => `  (literal ${q(p)})`));
  // Seatbelt applies the last rule that matches: the worktree inside the data dir is
  // opened after the data dir is closed, and the secrets are closed last.
  return [
    "(version 1)",
    "(allow default)",
    `(deny file-read* file-write* (subpath ${q(plan.dataDir)}))`,
    "(deny file-write*)",
    "(allow file-read* file-write*",
    ...plan.writable.map((p) => `  (subpath ${q(p)})`),
    // Seatbelt cannot move a path: a bind is opened where it is.
    ...plan.binds.map((b) => `  (subpath ${q(b.from)})`),
    '  (subpath "/private/tmp")',
    '  (subpath "/private/var/folders")',
    '  (literal "/dev/null")',
    '  (regex #"^/dev/tty")',
    ")",
    ...(hidden.length > 0 ? ["(deny file-read* file-write*", ...hidden, ")"] : []),
    "",
  ].join("\n");
}

/** The program and arguments that run `program args` inside `plan` on `os`. */
export function sandboxedCommand(
  os: string,
  bwrap: string,
  plan: SandboxPlan,
  program: string,
  args: readonly string[],
  alsoRuns: readonly string[] = [],
): { program: string; args: string[] } {
  if (os === "darwin") {
    return { program: "sandbox-exec", args: ["-p", seatbeltProfile(plan), program, ...args] };
  }
  const roots = programRoots([program, ...args, ...alsoRuns]);
  return { program: bwrap, args: [...bwrapArgs(plan, roots), program, ...args] };
}

/**
 * The folders under /tmp that a command line's absolute paths lie in (`/tmp/x` for
 * `/tmp/x/node_modules/agent/dist/index.js`, also as `--flag=/tmp/x/…`): a program installed
 * under /tmp (a checkout there, its `node_modules`) must stay readable in the sandbox, whose
 * /tmp is otherwise empty. The top folder, not the file: a Node program reads its
 * `node_modules` from the folders above it.
 */
export function programRoots(words: readonly string[]): string[] {
  const roots = new Set<string>();
  for (const word of words) {
    const path = word.startsWith("-") ? word.slice(word.indexOf("=") + 1) : word;
    const m = /^\/tmp\/([^/]+)/.exec(path);
    if (m && m[1] !== "." && m[1] !== "..") roots.add(`/tmp/${m[1]}`);
  }
  return [...roots];
}

/**
 * Whether the heartbeat agent's runs can run commands, and so run sandboxed:
 * `claude -p` and `codex exec` at workspace and inherit, the ACP runtime at
 * workspace (it refuses inherit). Locked runs have no tool but wats's.
 */
export function runnerSandboxed(runtime: string, access: string): boolean {
  if (runtime === "claude" || runtime === "codex") return access !== "locked";
  return runtime === "acp" && access === "workspace";
}

/** The one line that refuses an agent under `sandbox.mode = "required"`. */
export function requiredRefusal(what: string, problem: string): string {
  return `${what} is refused: sandbox.mode = "required" and the OS sandbox cannot run ` +
    `(${problem}); install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap), ` +
    "or accept running unsandboxed with `wats config set sandbox.mode auto`";
}

/** What the banner and `wats status` say about the sandbox of one runtime or harness. */
export function sandboxLine(mode: SandboxMode, problem: string | undefined): string {
  if (mode === "off") return "sandbox off (sandbox.mode = off): agents' commands see your files";
  if (problem !== undefined) {
    return mode === "auto"
      ? `warning: unsandboxed (sandbox.mode = auto): ${problem}`
      : `refused: ${problem}`;
  }
  return "sandboxed";
}

function unique(xs: readonly string[]): string[] {
  return [...new Set(xs)];
}
