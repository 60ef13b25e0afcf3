/**
 * Puts an agent's process into the OS sandbox (src/safety/sandbox.ts) as
 * `sandbox.mode` says: `required` refuses an agent the sandbox cannot hold,
 * `auto` runs it unsandboxed and says so, `off` never sandboxes.
 *
 * Which paths exist is asked inside the sandbox program itself (`stat` under
 * bubblewrap), which also proves the sandbox works here: the daemon holds no
 * read grant on the secrets it hides, and needs none.
 *
 * Requires `--allow-run` on `bwrap` (Linux) or `sandbox-exec` (macOS).
 *
 * @module
 */

import { errorMessage } from "../error_message.ts";
import type { SandboxMode } from "../config/schema.ts";
import { HarnessError } from "../errors.ts";
import {
  type AgentKind,
  agentState,
  type Bind,
  DEFAULT_HIDE,
  envHides,
  type PathKind,
  pathsToProbe,
  planSandbox,
  requiredRefusal,
  sandboxedCommand,
} from "./sandbox.ts";
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
}

/** Where an agent's processes start, and what they keep. */
export interface SandboxTarget {
  /** Who is started, for the refusal (`harness claude`, `the heartbeat agent`). */
  what: string;
  cwd: string;
  /** The agent's environment: where its state lives (CLAUDE_CONFIG_DIR, CODEX_HOME). */
  env: Record<string, string>;
  /** The agent whose state stays writable (`agentKindOf`). */
  kind: AgentKind;
  /** Readable where /tmp or the data dir would hide them: the checkout's git dir. */
  readable?: readonly string[];
  /** Writable besides the agent's state: the worktree and its git parts, the workspace. */
  writable: readonly string[];
  /** Paths bound at another path inside (a run's own socket as `mcp.sock`). */
  binds?: readonly Bind[];
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
    const state = agentState(s.kind, s.env, this.#options.home);
    const req = {
      dataDir: this.#options.dataDir,
      home: this.#options.home,
      hide: [...DEFAULT_HIDE, ...envHides(s.env), ...this.#options.hide],
      readable: s.readable ?? [],
      writable: [...s.writable, ...state.writable],
      keep: state.ownSecrets,
      binds: s.binds ?? [],
      cwd: s.cwd,
    };
    const probe = await probePaths(this.#os, this.#program, pathsToProbe(req));
    this.lastProblem = probe.problem;
    if (probe.problem !== undefined) {
      if (this.mode === "required") {
        throw new HarnessError("harness.sandbox", requiredRefusal(s.what, probe.problem));
      }
      const problem = probe.problem;
      return (program, args) => ({ ...plain(program, args), problem });
    }
    const plan = planSandbox(req, probe.kinds);
    const confine = await this.#options.network?.prepare(s) ?? OPEN_NETWORK;
    return (program, args) => ({
      ...confine(
        program,
        args,
        (p, a) => sandboxedCommand(this.#os, this.#program, plan, p, a, this.#options.self),
      ),
      sandboxed: true,
    });
  }

  /** Whether the sandbox runs here: undefined when it does, else why not (for status). */
  async check(): Promise<string | undefined> {
    if (this.mode === "off") return undefined;
    const probe = await probePaths(this.#os, this.#program, []);
    this.lastProblem = probe.problem;
    return probe.problem;
  }
}

/**
 * Which of `paths` exist and are folders, asked by `stat` inside the sandbox
 * program; `problem` says why the sandbox cannot run when it cannot.
 */
export async function probePaths(
  os: string,
  program: string,
  paths: readonly string[],
): Promise<{ kinds: Map<string, PathKind>; problem?: string }> {
  const kinds = new Map<string, PathKind>();
  // `stat -L`: a secret reached by a symlink is hidden where the link leads too.
  const stat = os === "darwin"
    ? ["stat", "-L", "-f", "%HT|%N", "--", "/", ...paths]
    : ["stat", "-L", "-c", "%F|%n", "--", "/", ...paths];
  const args = os === "darwin"
    ? ["-p", "(version 1)(allow default)", ...stat]
    : ["--ro-bind", "/", "/", "--dev", "/dev", "--unshare-pid", "--cap-drop", "ALL", "--", ...stat];
  let out: Deno.CommandOutput;
  try {
    out = await new Deno.Command(program, { args, stdin: "null", stdout: "piped", stderr: "piped" })
      .output();
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return { kinds, problem: `${program} is not on PATH` };
    return { kinds, problem: `${program} cannot start: ${errorMessage(err)}` };
  }
  const dec = new TextDecoder();
  const stderr = dec.decode(out.stderr).trim();
  // A missing path is stat's own complaint; anything from the sandbox program means it failed.
  const failed = stderr.split("\n").find((l) =>
    l.startsWith(`${program}:`) || /^sandbox-exec/.test(l)
  );
  if (failed !== undefined) return { kinds, problem: failed };
  for (const line of dec.decode(out.stdout).split("\n")) {
    const bar = line.indexOf("|");
    if (bar < 0) continue;
    const type = line.slice(0, bar).toLowerCase();
    kinds.set(line.slice(bar + 1), type === "directory" ? "dir" : "file");
  }
  // "/" is always there: without it, nothing ran inside.
  if (!kinds.has("/")) {
    return { kinds, problem: `${program} exited ${out.code}: ${stderr.slice(0, 200)}` };
  }
  kinds.delete("/");
  return { kinds };
}
