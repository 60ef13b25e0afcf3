/**
 * The OS sandbox of every process wats starts for an agent that can run commands
 * (docs/decisions/sandbox.md): deny by default around the person's home, every wats data dir
 * and the agents' own state; what is bound back; the bubblewrap arguments (Linux) or
 * sandbox-exec profile (macOS) that say so.
 *
 * Pure: which paths exist, which data dirs the person's daemons served and where the links of
 * the home toolchains lead are learnt by the probe (src/safety/sandbox_probe.ts), which runs
 * inside bubblewrap itself, so the daemon needs no read grant on what it hides.
 *
 * @module
 */

import type { SandboxMode } from "../config/schema.ts";
import { isWithin } from "../config/paths.ts";
import {
  type AgentProfile,
  type AgentState,
  expandHome,
  homeLike,
  outermost,
  pathToolchains,
  personAgentState,
  privateEnv,
  programRoot,
} from "./sandbox_home.ts";

export { type AgentProfile, type AgentState, expandHome } from "./sandbox_home.ts";

/**
 * Secrets hidden from every sandboxed agent, `~/` for the home directory; `sandbox.hide` adds
 * to it. Home is replaced by the agent's private one, so a `~/` entry matters only where a
 * path under home is bound back (a toolchain, the workspace); the sockets matter always.
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
  // A toolchain folder bound back read-only (`~/.cargo`) may hold the registry token.
  "~/.cargo/credentials",
  "~/.cargo/credentials.toml",
  // Sockets that hand out the user's keys or run programs outside the sandbox: the per-user
  // runtime dir (ssh and gpg agents, the session bus and its secret service), Docker, and
  // systemd's and the system bus's (as root, either starts a unit outside).
  "/run/user",
  "/run/docker.sock",
  "/run/systemd/private",
  "/run/dbus/system_bus_socket",
];

/**
 * The secrets the environment names: the ssh agent's socket (anywhere, such as under /tmp or
 * a keyring's folder), and the person's state of every `known` agent and of `own`, wherever
 * their variables (CLAUDE_CONFIG_DIR, CODEX_HOME) put it.
 */
export function envHides(
  env: Record<string, string>,
  known: readonly AgentProfile[],
  own?: AgentState,
): string[] {
  const sock = env.SSH_AUTH_SOCK;
  return [...(sock?.startsWith("/") ? [sock] : []), ...personAgentState(env, known, own)];
}

/** What one sandbox hides and opens, before the file system is asked. */
export interface SandboxRequest {
  /** This node's data dir: hidden whole. */
  dataDir: string;
  /** The user's home, for `~/`; replaced by `privateHome`. */
  home: string;
  /** `DEFAULT_HIDE` plus `sandbox.hide`, `~/` allowed. */
  hide: readonly string[];
  /** Re-bound read-only where /tmp, home or a data dir would hide them (the checkout's git dir). */
  readable: readonly string[];
  /** Re-bound writable over what is hidden or read-only: the call's worktree, its git parts. */
  writable: readonly string[];
  /**
   * Files or folders bound at another path inside (a run's own socket where its `wats mcp`
   * looks for `mcp.sock`), writable; after the data dir is hidden, before the secrets.
   */
  binds?: readonly Bind[];
  /** The agent's environment: PATH (home toolchains), the XDG folders. */
  env: Record<string, string>;
  /** Every agent wats knows: their state variables point into the private home inside. */
  agents: readonly AgentProfile[];
  /** The agent's private home folder (under the data dir), seen at `home` inside. */
  privateHome: string;
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

/** What the probe learnt (src/safety/sandbox_probe.ts). */
export interface Probed {
  /** The kind of each probed path that exists. */
  kinds: ReadonlyMap<string, PathKind>;
  /** The data dirs of the per-user list that exist (`dataDirList`). */
  dataDirs: readonly string[];
  /** Where the links in the PATH folders under home lead (`~/.local/bin/claude` → its version). */
  linked: readonly string[];
}

/** A sandbox with every path checked: what `bwrapArgs` and `seatbeltProfile` render. */
export interface SandboxPlan {
  /** Every data dir hidden (this node's first), each under a tmpfs. */
  dataDirs: string[];
  /** The private home and where it is seen: `home`, or itself when home cannot be replaced. */
  privateHome: string;
  homeAt: string;
  /** Whether the private home replaces the person's home (an existing folder other than `/`). */
  replacesHome: boolean;
  /** Folders outside home that hold the person's state (XDG dirs), under a tmpfs. */
  emptied: string[];
  /** Home toolchains bound back read-only where they exist (`--ro-bind-try`). */
  toolchains: string[];
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
  /** Set inside: HOME, CLAUDE_CONFIG_DIR, CODEX_HOME, TMPDIR. */
  env: Record<string, string>;
  cwd: string;
}

/** The hidden paths of `req`, absolute (a relative `sandbox.hide` entry names nothing). */
function hiddenPaths(req: SandboxRequest): string[] {
  return unique(req.hide.map((h) => expandHome(h, req.home))).filter((p) => p.startsWith("/"));
}

/** Every path `planSandbox` needs to know the kind of (ask the probe). */
export function pathsToProbe(req: SandboxRequest): string[] {
  return unique([
    ...(req.home.startsWith("/") ? [req.home] : []),
    ...homeLike(req.env, req.home),
    ...hiddenPaths(req),
    ...req.readable,
    ...req.writable,
  ]);
}

/** The PATH folders under home whose links the probe follows. */
export function foldersToResolve(req: SandboxRequest): string[] {
  if (!req.home.startsWith("/") || req.home.replace(/\/+$/, "") === "") return [];
  return unique((req.env.PATH ?? "").split(":").map((e) => e.replace(/\/+$/, "")))
    .filter((e) => e.startsWith("/") && e !== req.home && isWithin(e, req.home));
}

/**
 * The plan of `req`, given what the probe learnt. A missing path needs no hiding; a missing
 * writable path is left out (bubblewrap cannot bind what is not there). A hidden path that the
 * private home or a tmpfs already removed is not mounted again, unless something bound back
 * would show it.
 */
export function planSandbox(req: SandboxRequest, probe: Probed): SandboxPlan {
  const { kinds } = probe;
  const replacesHome = req.home.replace(/\/+$/, "") !== "" && kinds.get(req.home) === "dir";
  const home = replacesHome ? req.home : undefined;
  // A listed data dir that holds home, the node's own data dir or the cwd would hide them too.
  const others = probe.dataDirs.filter((d) =>
    d !== "/" && ![req.home, req.dataDir, req.cwd].some((p) => isWithin(p, d))
  );
  const known = unique([req.dataDir, ...others]);
  const toolchains = home === undefined ? [] : outermost([
    ...pathToolchains(req.env.PATH ?? "", home, known),
    ...probe.linked.flatMap((f) => programRoot(f, home, known) ?? []),
  ]);
  const emptied = homeLike(req.env, req.home).filter((p) => kinds.get(p) === "dir");
  const readable = unique(req.readable).filter((p) => kinds.has(p));
  const writable = unique(req.writable).filter((p) => kinds.has(p));
  const binds = [...(req.binds ?? [])];
  const shown = [...toolchains, ...readable, ...writable, ...binds.map((b) => b.to)];
  const visibleThrough = (gone: string[]) => (p: string) =>
    !gone.some((g) => isWithin(p, g)) || shown.some((s) => isWithin(p, s));
  const gone = [...(home ? [home] : []), ...emptied, "/tmp"];
  const hidden = hiddenPaths(req).filter((p) =>
    kinds.has(p) && visibleThrough([...gone, ...known])(p)
  );
  return {
    dataDirs: [req.dataDir, ...others.filter(visibleThrough(gone))],
    privateHome: req.privateHome,
    homeAt: home ?? req.privateHome,
    replacesHome,
    emptied,
    toolchains,
    hiddenDirs: hidden.filter((p) => kinds.get(p) === "dir"),
    hiddenFiles: hidden.filter((p) => kinds.get(p) === "file"),
    readable,
    // Without a home to replace, the private home is bound where it is, over the data dir's tmpfs.
    writable: home ? writable : [...writable, req.privateHome],
    binds,
    env: { ...privateEnv(home ?? req.privateHome, req.agents), TMPDIR: "/tmp" },
    cwd: req.cwd,
  };
}

/**
 * bubblewrap's arguments for `plan`, up to and including the `--` before the program. In mount
 * order, a later mount covering an earlier one: the root read-only, a fresh /dev, /proc and
 * /tmp; the private home over the person's; the home toolchains and the programs' folders
 * read-only; every data dir under a tmpfs; the readable, then the writable paths and the binds;
 * the secrets last, so nothing bound back uncovers one. The agent's processes see only their
 * own pids (so no `/proc/<daemon>/root` path into the data dir), start in a session of their own
 * with no controlling terminal (no TIOCSTI into the person's), hold no capability (root inside
 * could otherwise unmount a tmpfs: measured), and die with the sandbox.
 */
export function bwrapArgs(plan: SandboxPlan, programRoots: readonly string[] = []): string[] {
  const tmpRoots = programRoots.filter((p) => isWithin(p, "/tmp"));
  const homeRoots = programRoots.filter((p) => !isWithin(p, "/tmp"));
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
    ...tmpRoots.flatMap((p) => ["--ro-bind-try", p, p]),
    ...(plan.replacesHome ? ["--bind", plan.privateHome, plan.homeAt] : []),
    ...plan.emptied.flatMap((p) => ["--tmpfs", p]),
    ...[...plan.toolchains, ...homeRoots].flatMap((p) => ["--ro-bind-try", p, p]),
    ...plan.dataDirs.flatMap((p) => ["--tmpfs", p]),
    ...plan.readable.flatMap((p) => ["--ro-bind", p, p]),
    ...plan.writable.flatMap((p) => ["--bind", p, p]),
    ...plan.binds.flatMap((b) => ["--bind", b.from, b.to]),
    ...plan.hiddenDirs.flatMap((p) => ["--tmpfs", p]),
    ...plan.hiddenFiles.flatMap((p) => ["--ro-bind", "/dev/null", p]),
    "--unshare-pid",
    "--die-with-parent",
    "--new-session",
    "--cap-drop",
    "ALL",
    ...Object.entries(plan.env).flatMap(([k, v]) => ["--setenv", k, v]),
    "--chdir",
    plan.cwd,
    "--",
  ];
}

/**
 * The sandbox-exec (Seatbelt) profile of `plan` for macOS: reads everywhere but the data dirs,
 * home (bar its toolchains) and the secrets; writes only to the writable paths, the private
 * home and the temp folders. Seatbelt cannot move a folder: the private home is used where it
 * is, named by HOME (`sandboxedCommand`). Not tested on this project's Linux machines
 * (docs/safety.md).
 */
export function seatbeltProfile(plan: SandboxPlan, programRoots: readonly string[] = []): string {
  const q = (p: string) => JSON.stringify(p);
  const sub = (p: string) => `  (subpath ${q(p)})`;
  const hidden = [...plan.hiddenDirs.map(sub)]
    .concat(plan.hiddenFiles.map((p) => `  (literal ${q(p)})`));
  const home = plan.replacesHome ? [plan.homeAt] : [];
  // Seatbelt applies the last rule that matches: what is opened follows what is closed.
  return [
    "(version 1)",
    "(allow default)",
    "(deny file-read* file-write*",
    ...[...plan.dataDirs, ...home, ...plan.emptied].map(sub),
    ")",
    "(deny file-write*)",
    "(allow file-read*",
    ...[...plan.toolchains, ...programRoots, ...plan.readable].map(sub),
    ")",
    "(allow file-read* file-write*",
    ...[...plan.writable, plan.privateHome].map(sub),
    // Seatbelt cannot move a path: a bind is opened where it is.
    ...plan.binds.map((b) => sub(b.from)),
    '  (subpath "/private/tmp")',
    '  (subpath "/private/var/folders")',
    '  (literal "/dev/null")',
    ")",
    ...(hidden.length > 0 ? ["(deny file-read* file-write*", ...hidden, ")"] : []),
    "",
  ].join("\n");
}

/** Where a sandbox runs: the OS, its bubblewrap, what else the agent runs (`wats` itself). */
export interface SandboxHost {
  os: string;
  bwrap: string;
  /** Other programs' command lines whose folders must stay readable inside. */
  alsoRuns?: readonly string[];
}

/** The program and arguments that run `cmd` inside `plan` on `host`. */
export function sandboxedCommand(
  plan: SandboxPlan,
  cmd: { program: string; args: readonly string[] },
  host: SandboxHost,
): { program: string; args: string[] } {
  const { program, args } = cmd;
  const { os, bwrap, alsoRuns = [] } = host;
  const roots = programRoots([program, ...args, ...alsoRuns], plan);
  if (os === "darwin") {
    const env = Object.entries({ ...plan.env, HOME: plan.privateHome, TMPDIR: "/private/tmp" })
      .map(([k, v]) => `${k}=${v}`);
    return {
      program: "sandbox-exec",
      args: ["-p", seatbeltProfile(plan, roots), "env", ...env, program, ...args],
    };
  }
  return { program: bwrap, args: [...bwrapArgs(plan, roots), program, ...args] };
}

/**
 * The folders a command line's absolute paths need readable where the sandbox emptied them
 * (also as `--flag=/x/…`). Under /tmp, the top folder (`/tmp/x` for
 * `/tmp/x/node_modules/agent/dist/index.js`): a program installed there (a checkout, its
 * `node_modules`) reads the folders above it. Under home, `programRoot`'s folder, never home
 * itself nor one that holds a data dir.
 */
export function programRoots(
  words: readonly string[],
  plan?: Pick<SandboxPlan, "homeAt" | "replacesHome" | "dataDirs">,
): string[] {
  const roots = new Set<string>();
  for (const word of words) {
    const path = word.startsWith("-") ? word.slice(word.indexOf("=") + 1) : word;
    const m = /^\/tmp\/([^/]+)/.exec(path);
    if (m && m[1] !== "." && m[1] !== "..") roots.add(`/tmp/${m[1]}`);
    else if (plan?.replacesHome && path.startsWith("/") && !/(^|\/)\.\.?(\/|$)/.test(path)) {
      const root = programRoot(path, plan.homeAt, plan.dataDirs);
      if (root !== undefined) roots.add(root);
    }
  }
  return outermost([...roots]);
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
