/**
 * The launcher: reads the command line, resolves the data directory and the
 * paths the command needs, and runs the command's module in a Worker holding
 * exactly that command's permissions (docs/architecture.md §2). It then only relays signals
 * and the exit code.
 *
 * @module
 */

import { errorMessage } from "../error_message.ts";
import { pathExists } from "./io.ts";
import { WatsError } from "../errors.ts";
import { type DataPaths, dataPaths, resolveDataDir } from "../config/paths.ts";
import { describeModeChanges, makeDataDirPrivate } from "../config/data_dir_mode.ts";
import {
  type CommandId,
  LAUNCHER_FLAGS,
  type PermissionInputs,
  permissionsFor,
} from "./permissions.ts";
import { type CommandInit, type FromWorker, launchEnv, type ToWorker } from "./context.ts";
import { type Route, route, workerOf } from "./route.ts";
import { reportError } from "./worker_entry.ts";
import { commandInputs } from "./command_inputs.ts";
import { makeTryDir } from "./try_scratch.ts";
import { useTerminalSafeConsole } from "../io/terminal_text.ts";
import { printErr } from "./output.ts";

const WORKERS_DIR = new URL("../workers/", import.meta.url);
const MAIN = new URL("../../main.ts", import.meta.url);
const CONFIG = new URL("../../deno.json", import.meta.url);

/** The command that runs this program again, compiled or from source. */
export function selfCommand(): string[] {
  const exec = Deno.execPath();
  // A compiled wats is its own program; from source, run main.ts with this deno
  // (whatever its file is called).
  if (Deno.build.standalone) return [exec];
  return [
    exec,
    "run",
    "--quiet",
    ...LAUNCHER_FLAGS,
    "--config",
    CONFIG.pathname,
    MAIN.pathname,
  ];
}

/**
 * What the command from {@linkcode selfCommand} needs in its environment: from source, the
 * folder of Deno's cache as `DENO_DIR`. A sandbox's relay and a run's `wats mcp` are this
 * program again, started by agents whose environment is not the user's (an ACP agent's is
 * rebuilt; a harness may set HOME): without it, Deno inside a sandbox, where the cache is
 * read-only and the home may differ, finds no cache and compiles wats at every start
 * (measured: a missing cache folder alone costs the relay 0.2–0.4 s of retries). Deno's own
 * order: DENO_DIR, then XDG_CACHE_HOME, then the OS's cache folder under HOME.
 */
export function selfEnv(
  env: Readonly<Record<string, string>>,
  os: string,
  cwd: string,
  standalone = Deno.build.standalone,
): Record<string, string> {
  if (standalone) return {};
  const abs = (p: string) => p.startsWith("/") ? p : `${cwd}/${p}`;
  if (env.DENO_DIR) return { DENO_DIR: abs(env.DENO_DIR) };
  if (env.XDG_CACHE_HOME) return { DENO_DIR: `${abs(env.XDG_CACHE_HOME)}/deno` };
  if (!env.HOME) return {};
  if (os === "linux") return { DENO_DIR: `${env.HOME}/.cache/deno` };
  if (os === "darwin") return { DENO_DIR: `${env.HOME}/Library/Caches/deno` };
  return {};
}

/** Signals this close together are one Ctrl-C delivered twice. */
const DUPLICATE_SIGNAL_MS = 1000;

/** Commands that create the data directory when it is missing. */
const CREATES_DATA_DIR: ReadonlySet<CommandId> = new Set([
  "daemon",
  "mcp",
  "config-write",
  "config-ack",
  "setup",
]);

/** Runs the command line and returns the exit code. */
export async function launch(args: string[]): Promise<number> {
  // The launcher prints a Worker's uncaught error, whose message may quote anything.
  useTerminalSafeConsole();
  let r: Route;
  let paths: DataPaths;
  try {
    r = route(args);
  } catch (err) {
    return reportError(err, args.includes("--verbose") || args.includes("-v"));
  }
  try {
    const env = Deno.env.toObject();
    paths = dataPaths(resolveDataDir(r.dataDir, env, Deno.build.os, Deno.cwd()));
    requireDirectory(paths.dataDir);
  } catch (err) {
    return reportError(err, r.verbose, "launcher");
  }
  const env = Deno.env.toObject();
  const given = launchEnv(env, Deno.cwd(), r.id === "daemon");
  const self = selfEnv(env, Deno.build.os, Deno.cwd());
  // Before any Worker: the programs it runs, and its run grants, resolve on the trusted PATH.
  if (given.droppedPath.length > 0) Deno.env.set("PATH", given.env.PATH ?? "");
  const init: CommandInit = {
    argv: r.argv,
    words: r.words,
    paths,
    // From source, every command (and the agents' runs) names Deno's cache: inside a sandbox
    // HOME is the agent's private one, where Deno would otherwise find no cache.
    env: { ...given.env, ...self },
    ...(given.agentEnv ? { agentEnv: { ...given.agentEnv, ...self } } : {}),
    ...(given.droppedPath.length > 0 ? { droppedPath: given.droppedPath } : {}),
    cwd: Deno.cwd(),
    os: Deno.build.os,
    user: osUser(env),
    self: selfCommand(),
    stdinIsTerminal: Deno.stdin.isTerminal(),
    stdoutIsTerminal: Deno.stdout.isTerminal(),
    verbose: r.verbose,
  };
  let inputs: PermissionInputs;
  try {
    if (CREATES_DATA_DIR.has(r.id)) prepareDataDir(paths.dataDir);
    inputs = await commandInputs(r.id, init);
  } catch (err) {
    return reportError(err, r.verbose, "launcher");
  }
  if (r.id === "try" && !r.argv.some(isHelpFlag)) {
    // The throwaway node's data dir: made and removed here, whatever the worker does;
    // what a killed `wats try` left is removed first (src/cli/try_scratch.ts).
    const dir = makeTryDir();
    const scratch = dir.path;
    try {
      return await runWorker(r.id, { ...init, scratch }, { ...inputs, scratch }, r.worker);
    } finally {
      dir.remove();
    }
  }
  // The daemon's very first start records the acknowledged safety values, in a
  // worker whose only write grant is safety.json (create-new semantics).
  if (r.id === "daemon" && !pathExists(paths.safety) && !r.argv.some(isHelpFlag)) {
    const code = await runWorker(
      "safety-init",
      { ...init, argv: [], words: ["safety-init"] },
      inputs,
    );
    if (code !== 0) return code;
  }
  return await runWorker(r.id, init, inputs, r.worker);
}

/** Runs one command in its Worker and resolves with its exit code. */
export function runWorker(
  id: CommandId,
  init: CommandInit,
  inputs: PermissionInputs,
  workerFile = workerOf(id),
): Promise<number> {
  const permissions = permissionsFor(id, inputs);
  let worker: Worker;
  try {
    worker = new Worker(new URL(workerFile, WORKERS_DIR), {
      type: "module",
      name: id,
      deno: { permissions },
    });
  } catch (err) {
    // A launcher started without its flags cannot grant the Worker its set.
    return Promise.resolve(reportError(err, init.verbose, "launcher"));
  }
  return new Promise((resolve) => {
    let firstSignalAt: number | undefined;
    const onSignal = (signal: "SIGINT" | "SIGTERM") => () => {
      const now = performance.now();
      if (firstSignalAt === undefined) {
        firstSignalAt = now;
        worker.postMessage({ type: "signal", signal } satisfies ToWorker);
        return;
      }
      // One Ctrl-C can arrive twice: from the terminal and forwarded by a
      // parent such as `deno task`. A second one a moment later means now.
      if (now - firstSignalAt < DUPLICATE_SIGNAL_MS) return;
      cleanup();
      resolve(130);
    };
    const onInt = onSignal("SIGINT");
    const onTerm = onSignal("SIGTERM");
    Deno.addSignalListener("SIGINT", onInt);
    Deno.addSignalListener("SIGTERM", onTerm);
    const cleanup = () => {
      Deno.removeSignalListener("SIGINT", onInt);
      Deno.removeSignalListener("SIGTERM", onTerm);
      worker.terminate();
    };
    worker.onmessage = (e: MessageEvent<FromWorker>) => {
      if (e.data.type === "exit") {
        cleanup();
        resolve(e.data.code);
      }
    };
    worker.onerror = (e) => {
      e.preventDefault();
      cleanup();
      resolve(reportError(e.error ?? new Error(e.message), init.verbose));
    };
    worker.postMessage({ type: "run", init } satisfies ToWorker);
  });
}

/**
 * Refuses a data directory that is a file (or anything but a directory), for every command: each
 * would otherwise fail its own way, without naming the path ("Not a directory (os error 20)").
 */
function requireDirectory(dir: string): void {
  let info: Deno.FileInfo;
  try {
    info = Deno.statSync(dir);
  } catch {
    // Missing (created by the commands that need it) or unreadable (said by prepareDataDir).
    return;
  }
  if (!info.isDirectory) {
    throw new WatsError(
      "data_dir.not_a_directory",
      `the data directory ${dir} is not a directory: choose another with --data-dir DIR or WATS_DATA_DIR`,
    );
  }
}

/**
 * Creates the data directory when missing and checks that files can be made
 * in it, so a read-only or misplaced directory is one clear error before any
 * command starts, not a failure halfway through.
 */
function prepareDataDir(dir: string): void {
  const elsewhere = "or choose a writable one with --data-dir DIR or WATS_DATA_DIR";
  try {
    Deno.mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (err) {
    throw new WatsError(
      "data_dir.create",
      `cannot create the data directory ${dir} (${
        reason(err)
      }): check the folders above it, ${elsewhere}`,
      { cause: err },
    );
  }
  try {
    const changed = makeDataDirPrivate(dir);
    // Files inside a private folder were out of others' reach: fixed without a word.
    if (changed.some((c) => c.path === dir)) printErr(describeModeChanges(dir, changed));
  } catch (err) {
    throw new WatsError(
      "data_dir.not_private",
      `cannot make the data directory ${dir} private (${reason(err)}): it holds keys and ` +
        `posts, so make it yours with mode 0700 (chmod 700 ${dir}), ${elsewhere}`,
      { cause: err },
    );
  }
  try {
    Deno.removeSync(Deno.makeTempFileSync({ dir, prefix: ".wats-write-check-" }));
  } catch (err) {
    throw new WatsError(
      "data_dir.unwritable",
      `cannot write in the data directory ${dir} (${reason(err)}): make it writable ` +
        `(chmod u+rwx ${dir}), ${elsewhere}`,
      { cause: err },
    );
  }
}

/** The OS's words for a failure, without Deno's call details. */
function reason(err: unknown): string {
  const m = errorMessage(err);
  return m.split(" (os error")[0]!.trim();
}

function osUser(env: Record<string, string>): string {
  return env.USER || env.LOGNAME || env.USERNAME || "user";
}

function isHelpFlag(a: string): boolean {
  return a === "--help" || a === "-h";
}
