/**
 * Puts an agent's process into the OS sandbox (src/safety/sandbox.ts) as
 * `sandbox.mode` says: `required` refuses an agent the sandbox cannot hold,
 * `auto` runs it unsandboxed and says so, `off` never sandboxes.
 *
 * Each agent gets a private home under the data dir (`<data>/agent/homes/…`), made here and
 * seeded by the probe (src/safety/sandbox_probe.ts), which also records this data dir in the
 * person's list of data dirs and says which paths exist: the daemon holds no read grant on
 * the person's home or the secrets it hides, and needs none.
 *
 * Requires `--allow-run` on `bwrap` (Linux) or `sandbox-exec` (macOS), and `--allow-write` on
 * `<data>/agent` (the private homes).
 *
 * @module
 */

import type { SandboxMode } from "../config/schema.ts";
import { HarnessError } from "../errors.ts";
import {
  type AgentProfile,
  type Bind,
  DEFAULT_HIDE,
  envHides,
  foldersToResolve,
  pathsToProbe,
  planSandbox,
  requiredRefusal,
  sandboxedCommand,
  type SandboxRequest,
} from "./sandbox.ts";
import {
  dataDirList,
  loginSeeds,
  privateHomeOf,
  stateFolders,
  usableHome,
} from "./sandbox_home.ts";
import { probeSandbox } from "./sandbox_probe.ts";
import { OPEN_NETWORK, type SandboxNetwork } from "./net_gate.ts";

/** The sandbox program of `os`, the one the daemon's permission set grants. */
export function sandboxProgram(os: string): string {
  return os === "darwin" ? "sandbox-exec" : "bwrap";
}

/** What the sandbox settings and the node say. */
export interface SandboxerOptions {
  mode: SandboxMode;
  /** `sandbox.hide`. */
  hide: readonly string[];
  dataDir: string;
  home: string;
  /** `Deno.build.os` when unset. */
  os?: string;
  /** The sandbox program; `sandboxProgram(os)` when unset (tests point it elsewhere). */
  program?: string;
  /**
   * The command that runs wats itself: an agent inside starts `wats mcp` with it, so its files
   * stay readable where the sandbox's empty /tmp would hide them.
   */
  self?: readonly string[];
  /** `sandbox.network` (src/safety/net_gate.ts); unset: the network stays open. */
  network?: SandboxNetwork;
  /**
   * Every agent wats knows (src/runner/runtimes/agents.ts `AGENTS`): the person's state of each
   * is hidden from every sandbox, and their variables point into the private home inside.
   */
  agents: readonly AgentProfile[];
}

/** Where an agent's processes start, and what they keep. */
export interface SandboxTarget {
  /** Who is started, for the refusal (`harness claude`, `the heartbeat agent`). */
  what: string;
  cwd: string;
  /**
   * The agent's environment: its PATH (the home toolchains bound back), where the person's
   * login lives (its state variable).
   */
  env: Record<string, string>;
  /**
   * The agent held, as its runtime's facts or its `[harnesses.NAME]` declare it
   * (src/runner/runtimes/agents.ts `harnessAgent`): its login seeds the private home, its
   * vendor's hosts open under the model-only network. Unset: no login, no vendor host.
   */
  agent?: AgentProfile;
  /** Readable where /tmp or the data dir would hide them: the checkout's git dir. */
  readable?: readonly string[];
  /** Writable besides the private home: the worktree and its git parts, the workspace. */
  writable: readonly string[];
  /** Paths bound at another path inside (a run's own socket as `mcp.sock`). */
  binds?: readonly Bind[];
  /** No network at all (a tool wats runs over an agent's files), whatever `sandbox.network` says. */
  offline?: boolean;
}

/** One process to start for an agent. */
export interface SandboxedSpawn extends SandboxTarget {
  program: string;
  args: readonly string[];
}

/** Wraps one program and its arguments in a prepared sandbox. */
export type Wrapper = (program: string, args: readonly string[]) => Wrapped;

/** The command to spawn, and whether it runs sandboxed. */
export interface Wrapped {
  program: string;
  args: string[];
  sandboxed: boolean;
  /** Why it is not sandboxed (mode auto), or undefined. */
  problem?: string;
}

/** Wraps agents' processes in the sandbox; one per daemon. */
export class Sandboxer {
  readonly mode: SandboxMode;
  readonly #options: SandboxerOptions;
  readonly #os: string;
  readonly #program: string;
  /** What kept the last agent unsandboxed, for the banner and `wats status`. */
  lastProblem: string | undefined;

  constructor(o: SandboxerOptions) {
    this.#options = o;
    this.mode = o.mode;
    this.#os = o.os ?? Deno.build.os;
    this.#program = o.program ?? sandboxProgram(this.#os);
  }

  /**
   * The command that runs `s` in its sandbox.
   *
   * @throws {HarnessError} code `harness.sandbox` under `required` when the
   * sandbox cannot run here; the message is the one line to show.
   */
  async wrap(s: SandboxedSpawn): Promise<Wrapped> {
    return (await this.prepare(s))(s.program, s.args);
  }

  /**
   * Probes the sandbox of `s` once and returns what wraps each program started
   * in it (the runner probes before a run and spawns in a sync call).
   *
   * @throws {HarnessError} as `wrap` does.
   */
  async prepare(s: SandboxTarget): Promise<Wrapper> {
    const plain: Wrapper = (program, args) => ({ program, args: [...args], sandboxed: false });
    if (this.mode === "off") return plain;
    const o = this.#options;
    const privateHome = privateHomeOf(o.dataDir, s.what, s.cwd);
    // Every known agent's state variable is set inside for every agent, and an agent may refuse
    // one that does not exist (Codex 0.171 does: measured). A login is copied into its folder.
    const own = s.agent?.state;
    for (const dir of stateFolders(o.agents, own)) ownFolder(`${privateHome}/${dir}`);
    const req: SandboxRequest = {
      dataDir: o.dataDir,
      home: o.home,
      hide: [...DEFAULT_HIDE, ...envHides(s.env, o.agents, own), ...o.hide],
      readable: [...(s.readable ?? []), ...this.#denoDir(s.env)],
      writable: [...s.writable],
      binds: s.binds ?? [],
      env: s.env,
      agents: o.agents,
      privateHome,
      cwd: s.cwd,
    };
    const probe = await probeSandbox(this.#os, this.#program, {
      ...this.#list(),
      seeds: loginSeeds(own, s.env, o.home, privateHome),
      writable: [...this.#list().writable, privateHome],
      resolve: foldersToResolve(req),
      paths: pathsToProbe(req),
    });
    this.lastProblem = probe.problem;
    if (probe.problem !== undefined) {
      if (this.mode === "required") {
        throw new HarnessError("harness.sandbox", requiredRefusal(s.what, probe.problem));
      }
      const problem = probe.problem;
      return (program, args) => ({ ...plain(program, args), problem });
    }
    const plan = planSandbox(req, probe);
    const confine = await o.network?.prepare({ ...s, known: o.agents }) ?? OPEN_NETWORK;
    return (program, args) => ({
      ...confine(
        program,
        args,
        (p, a) =>
          sandboxedCommand(plan, { program: p, args: a }, {
            os: this.#os,
            bwrap: this.#program,
            ...(o.self ? { alsoRuns: o.self } : {}),
          }),
      ),
      sandboxed: true,
    });
  }

  /** The person's data dir list, when home is known, and the folder it is made in. */
  #list(): { list?: { file: string; dataDir: string }; writable: string[] } {
    const home = this.#options.home;
    if (!usableHome(home)) return { writable: [] };
    return { list: { file: dataDirList(home), dataDir: this.#options.dataDir }, writable: [home] };
  }

  /**
   * The Deno cache, read-only, when wats runs from source (`deno run … main.ts`): the `wats mcp`
   * an agent starts reads its modules there, and it may lie in the emptied home.
   */
  #denoDir(env: Record<string, string>): string[] {
    const self = this.#options.self?.[0] ?? "";
    if (!/(^|\/)deno$/.test(self)) return [];
    const cache = env.XDG_CACHE_HOME || `${this.#options.home}/.cache`;
    return [env.DENO_DIR || `${cache}/deno`];
  }

  /** Whether the sandbox runs here: undefined when it does, else why not (for status). */
  async check(): Promise<string | undefined> {
    if (this.mode === "off") return undefined;
    const list = this.#list();
    const probe = await probeSandbox(this.#os, this.#program, { ...list, paths: [] });
    this.lastProblem = probe.problem;
    return probe.problem;
  }
}

/**
 * Makes `path` a real folder of the daemon's: the agent writes its private home, and a link
 * planted there (`.claude` → the person's `~/.ssh`, or the data dir) would steer the login copy,
 * which runs outside the agent's sandbox, onto the person's files. Anything not a plain folder is
 * removed first (a link is removed, never followed).
 */
function ownFolder(path: string): void {
  let stat: Deno.FileInfo | undefined;
  try {
    stat = Deno.lstatSync(path);
  } catch {
    // Not there yet.
  }
  if (stat !== undefined && !(stat.isDirectory && !stat.isSymlink)) {
    Deno.removeSync(path, { recursive: true });
  }
  Deno.mkdirSync(path, { recursive: true, mode: 0o700 });
}
