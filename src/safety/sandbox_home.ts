/**
 * What an agent's sandbox puts where the person's home was (docs/decisions/sandbox.md, "Home"):
 * a private home folder of its own under the data dir, seeded with only the person's login for
 * its agent; read-only toolchains (the PATH folders under home and what their programs link
 * to); and every wats data dir the person's daemons have served, found in a per-user list.
 *
 * Pure: the folders that exist and where links lead are learnt by the probe
 * (src/safety/sandbox_probe.ts).
 *
 * @module
 */

import { dataPaths, isWithin } from "../config/paths.ts";

/**
 * Where one agent keeps its state (docs/decisions/sandbox.md, "Home"): the person's is never
 * seen inside; the private home has the agent's own, seeded with only its login.
 */
export interface AgentState {
  /** Its folder, directly under home (`~/.claude`). */
  dir: `~/${string}`;
  /** The variable that moves it (`CLAUDE_CONFIG_DIR`): set inside to the private home's folder. */
  dirEnv?: string;
  /** More of the person's state under home, hidden (`~/.claude.json`). */
  hide?: readonly string[];
  /** The files of its folder copied into the private home's at each start: its login. */
  login: readonly string[];
}

/**
 * What the sandbox is told of the agent it holds: the runtime's facts of a known agent
 * (src/runner/runtimes/agents.ts), or what a `[harnesses.NAME]` declares of another. The
 * sandbox never guesses it from a program's name: an agent nobody declared gets no profile,
 * so no login and no vendor host.
 */
export interface AgentProfile {
  /** Its name, for messages (`claude`, or the harness's). */
  name: string;
  /** Its state folder and login; none: an empty private home. */
  state?: AgentState;
  /** Its vendor's API hosts (`host:port`), reached unless `baseUrlEnv` points it elsewhere. */
  hosts: readonly string[];
  /** The variable that points it at another API (`ANTHROPIC_BASE_URL`). */
  baseUrlEnv?: string;
}

/** `~/x` → `<home>/x`; other paths as they are. */
export function expandHome(path: string, home: string): string {
  return path === "~" ? home : path.startsWith("~/") ? `${home}/${path.slice(2)}` : path;
}

/** Whether `home` can be replaced: an absolute folder other than `/`. */
export function usableHome(home: string): boolean {
  return home.startsWith("/") && home.replace(/\/+$/, "") !== "";
}

/**
 * The per-user list of the data dirs this person's daemons have served (one absolute path a
 * line), which every sandbox hides. Under home, so no agent sees or edits it.
 */
export function dataDirList(home: string): string {
  return `${home}/.local/state/wats/data-dirs`;
}

/**
 * The agent's private home: one per agent and working directory, so the agent of one work
 * cannot leave state (a hook, a settings file) that another work's agent then runs.
 */
export function privateHomeOf(dataDir: string, what: string, cwd: string): string {
  const slug = what.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "") || "agent";
  return `${dataPaths(dataDir).agentDir}/homes/${slug}-${fnv64(cwd)}`;
}

/**
 * Removes every private home made for agents that worked in `cwd` (one per agent, plus the
 * import's offline git), when the work there is removed: each may hold a copy of the person's
 * login, and nothing else would ever remove it. Returns the folders removed.
 */
export function forgetPrivateHomes(dataDir: string, cwd: string): string[] {
  const homes = `${dataPaths(dataDir).agentDir}/homes`;
  const suffix = `-${fnv64(cwd)}`;
  const removed: string[] = [];
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync(homes)];
  } catch {
    return removed;
  }
  for (const e of entries) {
    if (!e.name.endsWith(suffix)) continue;
    Deno.removeSync(`${homes}/${e.name}`, { recursive: true });
    removed.push(`${homes}/${e.name}`);
  }
  return removed;
}

/**
 * The person's own agent state, of every agent wats knows (`known`) and of the one being held:
 * never seen or written inside, whatever is bound back.
 */
export function personAgentState(
  env: Record<string, string>,
  known: readonly AgentProfile[],
  own?: AgentState,
): string[] {
  const states = statesOf(known, own);
  return [
    ...states.flatMap((s) => [s.dir, ...(s.hide ?? [])]),
    ...states.flatMap((s) => s.dirEnv ? env[s.dirEnv] ?? [] : []).filter((p) => p.startsWith("/")),
  ];
}

/** A file copied from the person's state into the private home at each start. */
export interface Seed {
  from: string;
  to: string;
}

/**
 * The person's login of an agent whose state is `state`, copied into the private home: its
 * `login` files, from its folder (or where its `dirEnv` moves it). An agent without a declared
 * state gets none. A missing source removes the old copy (the person logged out).
 */
export function loginSeeds(
  state: AgentState | undefined,
  env: Record<string, string>,
  home: string,
  privateHome: string,
): Seed[] {
  if (state === undefined) return [];
  const dir = (state.dirEnv ? env[state.dirEnv] : undefined) || expandHome(state.dir, home);
  const inside = expandHome(state.dir, privateHome);
  return state.login.map((f) => ({ from: `${dir}/${f}`, to: `${inside}/${f}` }));
}

/**
 * The folders of the private home a login is copied into, made by the daemon before the probe:
 * every known agent's (their variables point there inside) and the held agent's.
 */
export function stateFolders(known: readonly AgentProfile[], own?: AgentState): string[] {
  return statesOf(known, own).map((s) => s.dir.slice(2));
}

/**
 * The variables set inside: every agent (and any agent it starts) keeps its state in the private
 * home, whatever CLAUDE_CONFIG_DIR or CODEX_HOME the person's environment names.
 */
export function privateEnv(home: string, known: readonly AgentProfile[]): Record<string, string> {
  const moved = statesOf(known).flatMap((s) =>
    s.dirEnv ? [[s.dirEnv, expandHome(s.dir, home)] as const] : []
  );
  return { HOME: home, ...Object.fromEntries(moved) };
}

/** The states of the known agents and of `own`, each once. */
function statesOf(known: readonly AgentProfile[], own?: AgentState): AgentState[] {
  const states = known.flatMap((a) => a.state ? [a.state] : []);
  return [...new Set([...states, ...(own ? [own] : [])])];
}

/**
 * The XDG base folders the environment puts outside home: the person's state there is emptied
 * like home.
 */
export function homeLike(env: Record<string, string>, home: string): string[] {
  const vars = ["XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"];
  return unique(
    vars.map((v) => env[v] ?? "").filter((p) =>
      p.startsWith("/") && p.replace(/\/+$/, "") !== "" && !isWithin(p, home)
    ),
  );
}

/** Folders directly under home that hold many programs' data: never bound whole. */
const MIXED = new Set([".local", ".config", ".cache", "Library"]);

/** Whether `dir` may be bound back read-only: under home, not home, no data dir inside. */
function bindable(dir: string, home: string, dataDirs: readonly string[]): boolean {
  return dir !== home && isWithin(dir, home) && !dataDirs.some((d) => isWithin(d, dir));
}

/**
 * The read-only toolchain folders of the PATH entries under home: a dot-folder's whole prefix
 * (`~/.cargo` for `~/.cargo/bin`, `~/.npm-global` for `~/.npm-global/bin`), since a toolchain
 * reads its libraries beside its `bin`; otherwise the entry itself (`~/bin`, `~/.local/bin`).
 * Never home, never a folder holding a wats data dir.
 */
export function pathToolchains(
  path: string,
  home: string,
  dataDirs: readonly string[],
): string[] {
  const out: string[] = [];
  for (const entry of path.split(":")) {
    const e = entry.replace(/\/+$/, "");
    if (!e.startsWith("/") || !bindable(e, home, dataDirs)) continue;
    const top = e.slice(home.length + 1).split("/")[0]!;
    const prefix = `${home}/${top}`;
    out.push(
      top.startsWith(".") && !MIXED.has(top) && bindable(prefix, home, dataDirs) ? prefix : e,
    );
  }
  return unique(out);
}

/**
 * The folder to bind read-only for a program file under home (a PATH link's target, an absolute
 * word of a command line): the project or prefix above its first `node_modules` (a Node program
 * reads the folders above it), or a `bin` folder's prefix two levels or more below home (a
 * virtualenv, an nvm version), or else its own folder. Undefined when that is not bindable.
 */
export function programRoot(
  file: string,
  home: string,
  dataDirs: readonly string[],
): string | undefined {
  if (!isWithin(file, home) || file === home) return undefined;
  const parts = file.slice(home.length + 1).split("/");
  const nm = parts.indexOf("node_modules");
  const own = `${home}/${parts.slice(0, -1).join("/")}`;
  const candidates: string[] = [];
  if (nm > 0) candidates.push(`${home}/${parts.slice(0, nm).join("/")}`);
  if (parts.length >= 4 && parts.at(-2) === "bin") {
    candidates.push(`${home}/${parts.slice(0, -2).join("/")}`);
  }
  candidates.push(own);
  return candidates.find((c) => bindable(c, home, dataDirs));
}

/** Drops paths inside another path of the list. */
export function outermost(paths: readonly string[]): string[] {
  const u = unique(paths);
  return u.filter((p) => !u.some((q) => q !== p && isWithin(p, q)));
}

/** 64-bit FNV-1a of `s`, hex: a short stable name for a path. */
function fnv64(s: string): string {
  let h = 0xcbf29ce484222325n;
  for (const b of new TextEncoder().encode(s)) {
    h ^= BigInt(b);
    h = (h * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return h.toString(16).padStart(16, "0");
}

function unique(xs: readonly string[]): string[] {
  return [...new Set(xs)];
}
