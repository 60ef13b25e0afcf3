/**
 * Runs wats from source as a subprocess, exactly as `deno task wats` and the
 * compiled binary do (same entry, same launcher permission flags), isolated
 * from the machine: each run gets its own HOME (so the default data directory,
 * `~/.claude.json` and friends are throwaway) unless the test passes one.
 *
 * - {@linkcode runWats} runs a command to completion.
 * - {@linkcode startWats} starts a long-running one (the daemon, `wats mcp`) and
 *   reads its stdout line by line.
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import { LAUNCHER_FLAGS } from "../../src/cli/permissions.ts";

/** The repository's `main.ts`. */
export const MAIN_TS: string = fileURLToPath(new URL("../../main.ts", import.meta.url));

/** The repository's `deno.json`. */
export const DENO_JSON: string = fileURLToPath(new URL("../../deno.json", import.meta.url));

/**
 * The command that runs wats from source: `deno run <launcher flags> --quiet
 * --config deno.json main.ts`. `--quiet` only hides Deno's own download notes,
 * which the compiled binary never prints.
 */
export function watsCommand(): [string, ...string[]] {
  return [Deno.execPath(), "run", ...LAUNCHER_FLAGS, "--quiet", "--config", DENO_JSON, MAIN_TS];
}

let cachedDenoDir: string | undefined;

/**
 * Deno's cache folder of this test process. Subprocesses get it as `DENO_DIR`
 * so that a changed HOME does not send them to an empty cache (which would
 * download every npm dependency again). Requires `--allow-run --allow-env`.
 */
export function denoDir(): string {
  if (cachedDenoDir !== undefined) return cachedDenoDir;
  const fromEnv = Deno.env.get("DENO_DIR");
  if (fromEnv) return cachedDenoDir = fromEnv;
  const out = new Deno.Command(Deno.execPath(), {
    args: ["info", "--json"],
    stdout: "piped",
    stderr: "null",
  }).outputSync();
  cachedDenoDir = JSON.parse(new TextDecoder().decode(out.stdout)).denoDir as string;
  return cachedDenoDir;
}

/** A fresh, empty data directory under the system temp folder. */
export function tempDataDir(): string {
  return Deno.makeTempDirSync({ prefix: "wats-data-" });
}

/** Options for running wats. */
export interface WatsOptions {
  /** The data directory (passed as `WATS_DATA_DIR`); unset: the default under the temp HOME. */
  dataDir?: string;
  /** Extra environment variables, applied last. */
  env?: Record<string, string>;
  /** Written to stdin, which is then closed; unset: stdin is empty (runWats) or kept open (startWats). */
  stdin?: string;
  /** The working directory; unset: the test process's. */
  cwd?: string;
  /** The HOME to use; unset: a fresh temp dir, removed when the run ends. */
  home?: string;
  /** Kill (SIGKILL) after this long: a safety net, not a test of speed. 120 s when unset. */
  timeoutMs?: number;
}

/** How a finished wats run ended. */
export interface WatsResult {
  code: number;
  stdout: string;
  stderr: string;
  /** True when the run was killed for outliving `timeoutMs`. */
  timedOut: boolean;
}

/** Variables of the test's own shell that would change what wats or its harnesses do. */
const DROPPED_ENV =
  /^(WATS_.*|XDG_.*|CLAUDE_.*|CLAUDECODE|CODEX_.*|ANTHROPIC_.*|OPENAI_.*|IS_SANDBOX|NO_COLOR)$/;

function childEnv(opts: WatsOptions, home: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(Deno.env.toObject())) {
    if (!DROPPED_ENV.test(k)) env[k] = v;
  }
  env.HOME = home;
  env.DENO_DIR = denoDir();
  env.NO_COLOR = "1";
  if (opts.dataDir !== undefined) env.WATS_DATA_DIR = opts.dataDir;
  return Object.assign(env, opts.env ?? {});
}

function spawnIsolated(command: string[], opts: WatsOptions, home: string): Deno.ChildProcess {
  const [cmd, ...rest] = command;
  if (cmd === undefined) {
    throw new Error("error: no command to run: pass the program and its arguments");
  }
  return new Deno.Command(cmd, {
    args: rest,
    cwd: opts.cwd,
    env: childEnv(opts, home),
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

async function writeAndClose(child: Deno.ChildProcess, text: string | undefined): Promise<void> {
  try {
    const w = child.stdin.getWriter();
    if (text !== undefined) await w.write(new TextEncoder().encode(text));
    await w.close();
  } catch {
    // The process exited without reading stdin; its output says why.
  }
}

/**
 * Runs `wats <args>` to completion and returns its exit code and output.
 * Requires `--allow-run --allow-read --allow-write --allow-env`.
 */
export async function runWats(args: string[], opts: WatsOptions = {}): Promise<WatsResult> {
  const home = opts.home ?? Deno.makeTempDirSync({ prefix: "wats-home-" });
  try {
    const child = spawnIsolated([...watsCommand(), ...args], opts, home);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        child.kill("SIGKILL");
      } catch {
        // Already gone.
      }
    }, opts.timeoutMs ?? 120_000);
    await writeAndClose(child, opts.stdin);
    const out = await child.output();
    clearTimeout(timer);
    const dec = new TextDecoder();
    return {
      code: out.code,
      stdout: dec.decode(out.stdout),
      stderr: dec.decode(out.stderr),
      timedOut,
    };
  } finally {
    if (opts.home === undefined) Deno.removeSync(home, { recursive: true });
  }
}

/** A wats process started by {@linkcode startWats}; `await using` stops it. */
export interface RunningWats extends AsyncDisposable {
  /** The child process (its `pid`, `status`). */
  process: Deno.ChildProcess;
  /** The HOME it runs with. */
  home: string;
  /** Every stdout line received so far (without the newline). */
  stdoutLines: string[];
  /** Reads stdout lines as they come; ends when stdout closes. Shares lines with `nextLine`. */
  lines(): AsyncIterableIterator<string>;
  /** The next unread stdout line, or null once stdout has closed. */
  nextLine(): Promise<string | null>;
  /**
   * Reads lines until one satisfies `match`, and returns it. Throws with the
   * output so far when stdout closes first, or after `timeoutMs` (default 60 s).
   */
  waitForLine(match: (line: string) => boolean, timeoutMs?: number): Promise<string>;
  /** Everything written to stderr so far. */
  stderr(): string;
  /** Writes to stdin (when it was not given as `opts.stdin`). */
  write(text: string): Promise<void>;
  /** Closes stdin. */
  closeStdin(): Promise<void>;
  /**
   * Sends `signal` (default SIGTERM), waits for the exit (SIGKILL after
   * `graceMs`, default 15 s) and returns how it ended. Safe to call twice.
   */
  stop(signal?: Deno.Signal, graceMs?: number): Promise<WatsResult>;
}

/**
 * Starts `wats <args>` and leaves it running. Always `stop()` it, or hold it
 * with `await using`.
 * Requires `--allow-run --allow-read --allow-write --allow-env`.
 */
export function startWats(args: string[], opts: WatsOptions = {}): RunningWats {
  return startIsolated([...watsCommand(), ...args], opts);
}

/**
 * Starts any command the way {@linkcode startWats} starts wats (same isolated
 * environment and line reader): for helper processes such as a second node
 * built from another command line.
 */
export function startIsolated(command: string[], opts: WatsOptions = {}): RunningWats {
  const home = opts.home ?? Deno.makeTempDirSync({ prefix: "wats-home-" });
  const child = spawnIsolated(command, opts, home);
  const stdoutLines: string[] = [];
  let read = 0;
  let closed = false;
  let waiters: (() => void)[] = [];
  const notify = () => {
    const ws = waiters;
    waiters = [];
    for (const w of ws) w();
  };
  let stderrText = "";
  let stdoutRest = "";

  const stdoutDone = (async () => {
    const dec = new TextDecoder();
    for await (const chunk of child.stdout) {
      stdoutRest += dec.decode(chunk, { stream: true });
      let nl: number;
      while ((nl = stdoutRest.indexOf("\n")) >= 0) {
        stdoutLines.push(stdoutRest.slice(0, nl).replace(/\r$/, ""));
        stdoutRest = stdoutRest.slice(nl + 1);
      }
      notify();
    }
    if (stdoutRest !== "") stdoutLines.push(stdoutRest);
    stdoutRest = "";
    closed = true;
    notify();
  })();
  const stderrDone = (async () => {
    const dec = new TextDecoder();
    for await (const chunk of child.stderr) stderrText += dec.decode(chunk, { stream: true });
  })();

  const stdin = child.stdin.getWriter();
  let stdinClosed = false;
  const closeStdin = async () => {
    if (stdinClosed) return;
    stdinClosed = true;
    try {
      await stdin.close();
    } catch {
      // Already gone.
    }
  };
  if (opts.stdin !== undefined) {
    stdin.write(new TextEncoder().encode(opts.stdin)).then(closeStdin, closeStdin);
  }

  const nextLine = async (): Promise<string | null> => {
    while (read >= stdoutLines.length) {
      if (closed) return null;
      await new Promise<void>((r) => waiters.push(r));
    }
    return stdoutLines[read++]!;
  };

  const safety = setTimeout(() => {
    try {
      child.kill("SIGKILL");
    } catch {
      // Already gone.
    }
  }, opts.timeoutMs ?? 120_000);

  let result: Promise<WatsResult> | null = null;
  const stop = (signal: Deno.Signal = "SIGTERM", graceMs = 15_000): Promise<WatsResult> => {
    if (result) return result;
    result = (async () => {
      try {
        child.kill(signal);
      } catch {
        // Already exited.
      }
      let killed = false;
      const timer = setTimeout(() => {
        killed = true;
        try {
          child.kill("SIGKILL");
        } catch {
          // Already exited.
        }
      }, graceMs);
      const status = await child.status;
      clearTimeout(timer);
      clearTimeout(safety);
      await closeStdin();
      await Promise.all([stdoutDone, stderrDone]);
      if (opts.home === undefined) Deno.removeSync(home, { recursive: true });
      return {
        code: status.code,
        stdout: stdoutLines.map((l) => l + "\n").join(""),
        stderr: stderrText,
        timedOut: killed,
      };
    })();
    return result;
  };

  return {
    process: child,
    home,
    stdoutLines,
    async *lines() {
      for (let l = await nextLine(); l !== null; l = await nextLine()) yield l;
    },
    nextLine,
    async waitForLine(match, timeoutMs = 60_000) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() =>
          reject(
            new Error(
              `no matching stdout line within ${timeoutMs} ms; stdout:\n${
                stdoutLines.join("\n")
              }\nstderr:\n${stderrText}`,
            ),
          ), timeoutMs);
      });
      try {
        return await Promise.race([
          (async () => {
            for (let l = await nextLine(); l !== null; l = await nextLine()) {
              if (match(l)) return l;
            }
            throw new Error(
              `stdout closed before a matching line; stdout:\n${
                stdoutLines.join("\n")
              }\nstderr:\n${stderrText}`,
            );
          })(),
          timeout,
        ]);
      } finally {
        clearTimeout(timer);
      }
    },
    stderr: () => stderrText,
    write: (text) => stdin.write(new TextEncoder().encode(text)),
    closeStdin,
    stop,
    [Symbol.asyncDispose]: async () => void await stop(),
  };
}
