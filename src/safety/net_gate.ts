/**
 * `sandbox.network` for the sandboxer (docs/decisions/sandbox.md, "The network"): under
 * `model-only` each sandbox gets a network namespace of its own, its command starts behind
 * the relay (`wats sandbox-relay`), and the relay reaches the daemon's model proxy
 * (src/safety/net_proxy.ts) through one bound socket. Where bubblewrap cannot make a network
 * namespace, `sandbox.mode` decides: `required` refuses, `auto` runs with the network open and
 * says so.
 *
 * Requires `--allow-run` on the sandbox program, and what {@linkcode ModelProxy} requires.
 *
 * @module
 */

import { errorMessage } from "../error_message.ts";
import { HarnessError } from "../errors.ts";
import type { SandboxMode, SandboxNetworkMode } from "../config/schema.ts";
import type { AgentProfile } from "./sandbox.ts";
import { ModelProxy } from "./net_proxy.ts";
import { modelHosts, relayCommand, withModelOnly } from "./net_policy.ts";

/** Options of {@linkcode SandboxNetwork}. */
export interface SandboxNetworkOptions {
  /** `sandbox.network`. */
  network: SandboxNetworkMode;
  /** `sandbox.mode`: what a sandbox whose network cannot be closed does. */
  mode: SandboxMode;
  /** The proxy's socket outside (`modelSocketPath`). */
  socket: string;
  /** Every model host of this node's agents (`nodeModelHosts`): the proxy's whole list. */
  hosts: readonly string[];
  /** The command that runs wats: the relay is wats itself. */
  self: readonly string[];
  /** `Deno.build.os` when unset. */
  os?: string;
  /** The sandbox program; `bwrap` when unset. */
  program?: string;
  /** Told of each request the proxy refused. */
  onRefused?: (target: string, reason: string) => void;
}

/** What a sandbox of one agent needs of the network: its command, given how to sandbox one. */
export type Confine = (
  program: string,
  args: readonly string[],
  sandbox: (program: string, args: readonly string[]) => { program: string; args: string[] },
) => { program: string; args: string[] };

/** The open network: the command is sandboxed as it is. */
export const OPEN_NETWORK: Confine = (program, args, sandbox) => sandbox(program, args);

/** The socket of the model proxy in a data dir's agent folder. */
export function modelSocketPath(agentDir: string): string {
  return `${agentDir}/model.sock`;
}

/** The network of every sandbox of one daemon. */
export class SandboxNetwork {
  readonly network: SandboxNetworkMode;
  readonly #options: SandboxNetworkOptions;
  #probe: Promise<string | undefined> | undefined;
  #offlineProbe: Promise<string | undefined> | undefined;
  #proxy: ModelProxy | undefined;
  /** Why model-only could not be had, once probed. */
  problem: string | undefined;

  constructor(o: SandboxNetworkOptions) {
    this.#options = o;
    this.network = o.network;
  }

  /** Undefined when the sandboxes get the network `sandbox.network` asks for, else why not. */
  check(): Promise<string | undefined> {
    if (this.network === "open") return Promise.resolve(undefined);
    this.#probe ??= probeNetNamespace(
      this.#options.os ?? Deno.build.os,
      this.#options.program ?? "bwrap",
    )
      .then((p) => this.problem = p);
    return this.#probe;
  }

  /** What the banner and `wats status` say about the sandboxes' network. */
  line(): string {
    if (this.network === "open") {
      return "open (sandbox.network = open): agents' commands reach every host and 127.0.0.1";
    }
    if (this.problem !== undefined) {
      return `warning: open (sandbox.mode = auto): ${this.problem}`;
    }
    return "model-only";
  }

  /**
   * How the sandbox of `s` is given its network.
   *
   * @throws {HarnessError} code `harness.sandbox` when model-only cannot run and
   * `sandbox.mode = "required"`.
   */
  async prepare(
    s: {
      what: string;
      agent?: AgentProfile;
      env: Record<string, string>;
      offline?: boolean;
      /** Every agent wats knows (their base URL variables). */
      known: readonly AgentProfile[];
    },
  ): Promise<Confine> {
    if (s.offline) return await this.#offline();
    if (this.network === "open") return OPEN_NETWORK;
    const problem = await this.check();
    if (problem !== undefined) {
      if (this.#options.mode === "required") {
        throw new HarnessError("harness.sandbox", networkRefusal(s.what, problem));
      }
      return OPEN_NETWORK;
    }
    this.#proxy ??= new ModelProxy({
      socket: this.#options.socket,
      hosts: this.#options.hosts,
      onRefused: this.#options.onRefused,
    });
    const socket = this.#proxy.socket;
    return (program, args, sandbox) => {
      const hosts = modelHosts({
        ...(s.agent ? { agent: s.agent } : {}),
        env: s.env,
        args: [program, ...args],
        known: s.known,
      });
      const relay = relayCommand(this.#options.self, hosts, program, args);
      const cmd = sandbox(relay.program, relay.args);
      return { program: cmd.program, args: withModelOnly(cmd.args, socket) };
    };
  }

  /**
   * No network at all, for a tool wats runs over what an agent wrote (the work's git
   * upload-pack): a network namespace with loopback only, no relay, no proxy. Where the namespace
   * cannot be made the tool keeps the network, which it does not use.
   */
  async #offline(): Promise<Confine> {
    this.#offlineProbe ??= probeNetNamespace(
      this.#options.os ?? Deno.build.os,
      this.#options.program ?? "bwrap",
    )
      .catch((err) => String(err));
    if (await this.#offlineProbe !== undefined) return OPEN_NETWORK;
    return (program, args, sandbox) => {
      const cmd = sandbox(program, args);
      const end = cmd.args.indexOf("--");
      return {
        program: cmd.program,
        args: [...cmd.args.slice(0, end), "--unshare-net", ...cmd.args.slice(end)],
      };
    };
  }

  /** Stops the proxy, if it started. */
  async close(): Promise<void> {
    await this.#proxy?.close();
  }
}

/** The one line that refuses an agent whose sandbox cannot close its network. */
export function networkRefusal(what: string, problem: string): string {
  return `${what} is refused: sandbox.network = "model-only", sandbox.mode = "required" and ` +
    `the sandbox cannot have a network of its own (${problem}); let bubblewrap make network ` +
    "namespaces here (a container may need --privileged or a seccomp profile that allows " +
    "unshare), or accept the open network with `wats config set sandbox.network open`";
}

/**
 * Whether bubblewrap can give a sandbox a network namespace of its own here: undefined when it
 * can, else why not.
 */
export async function probeNetNamespace(os: string, program: string): Promise<string | undefined> {
  if (os !== "linux") return `model-only needs bubblewrap (Linux); this is ${os}`;
  const args = [
    "--ro-bind",
    "/",
    "/",
    "--dev",
    "/dev",
    "--unshare-net",
    "--unshare-pid",
    "--cap-drop",
    "ALL",
    "--",
    "stat",
    "-c",
    "%n",
    "/",
  ];
  try {
    const out = await new Deno.Command(program, {
      args,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (out.success && new TextDecoder().decode(out.stdout).trim() === "/") return undefined;
    const err = new TextDecoder().decode(out.stderr).trim().split("\n")[0] ?? "";
    return `${program} --unshare-net exited ${out.code}${err ? `: ${err.slice(0, 200)}` : ""}`;
  } catch (err) {
    return `${program} --unshare-net cannot start: ${errorMessage(err)}`;
  }
}
