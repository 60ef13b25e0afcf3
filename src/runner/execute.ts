/**
 * Running one run, once the scheduler (scheduler.ts) has decided it is due:
 * prepare it, build the harness command, recreate the locked run directory
 * empty, write the command's files, spawn the process group, hold it to
 * `agent.timeout`, copy its output into the transcript, and turn how it ended
 * into the transcript's footer. While it runs, the run is recorded (its
 * process group, the program) and marked alive each second, so a daemon that
 * starts after a crash can end what this one left and date it (state_file.ts).
 *
 * Whatever fails after the spawn (the transcript cannot be written, a parser
 * throws), the process group is ended and waited for before the run is
 * recorded as failed: no run ever outlives its record, and the next one never
 * starts beside it.
 *
 * @module
 */

import { errorMessage } from "../error_message.ts";
import type { Harness, HarnessCommand, RunContext, RunEvent, RunningProcess } from "./harness.ts";
import type { Clock, RunnerLog, Timers } from "./ports.ts";
import { type ProcessRow, strayProcesses } from "./process_watch.ts";
import type { SpawnFn } from "./spawn.ts";
import type { RunRecorder } from "./state_file.ts";
import type { RunFooter, TranscriptWriter } from "./transcripts.ts";
import type { RunStatus } from "../contracts/runs.ts";
import { formatDuration } from "../duration.ts";
import { ActWatch } from "./retry.ts";

/** The file operations a run needs (its generated files, its empty directory). */
export interface RunnerFs {
  mkdir(path: string): void;
  /**
   * Makes `path` an empty directory: whatever is there (a directory with
   * files, a file, a symlink) is removed first. A symlink is removed itself,
   * never followed, so nothing outside `path` is touched.
   */
  emptyDir(path: string): void;
  writeFile(path: string, text: string, mode: number): void;
  remove(path: string): void;
}

/** Real file operations. Requires `--allow-write` on the agent directory. */
export const denoRunnerFs: RunnerFs = {
  mkdir: (path) => Deno.mkdirSync(path, { recursive: true, mode: 0o700 }),
  emptyDir: (path) => {
    try {
      // lstat: a symlink planted here is the link, not what it points to, and
      // removeSync deletes the link; a recursive remove does not follow links
      // inside the directory either.
      Deno.lstatSync(path);
      Deno.removeSync(path, { recursive: true });
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
    Deno.mkdirSync(path, { mode: 0o700 });
  },
  writeFile: (path, text, mode) => Deno.writeTextFileSync(path, text, { mode }),
  remove: (path) => {
    try {
      Deno.removeSync(path);
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
  },
};

/** How often a run in progress is marked alive in its record. */
export const ALIVE_MS = 1000;

/**
 * How often the processes of a run whose harness has a `processRule` are checked: a shell
 * command Codex does not report is ended twice this long after it started, at most (plus two
 * `ps`): a stray must be seen by two checks in a row.
 */
export const WATCH_MS = 250;

/** What running one run needs. */
export interface ExecuteDeps {
  clock: Clock;
  timers: Timers;
  log: RunnerLog;
  harness: Harness;
  spawn: SpawnFn;
  fs: RunnerFs;
  /** The locked run directory: recreated empty before each run that works in it. */
  runDir: string;
  /** `agent.timeout`, ms. */
  timeoutMs: number;
  /** Writes the run's deny rules and access plan (see `RunnerLaunch.prepare`). */
  prepare?: (
    ctx: RunContext,
  ) => Promise<Partial<Pick<RunContext, "settingsFile" | "access" | "cwd">>>;
  /** Where the run in progress is recorded; nothing is recorded when unset. */
  recorder?: RunRecorder;
  /** The leader's start time, epoch seconds as `ps` shows it, for the record (pid reuse check). */
  identify?: (pid: number) => Promise<number | undefined>;
  /**
   * The machine's processes (process_watch.ts `listProcesses`), to hold a run to its
   * harness's `processRule`; a run's processes are not watched when unset.
   */
  listProcesses?: () => Promise<ProcessRow[]>;
}

/** How the scheduler steers a run it started. */
export interface RunControl {
  /** Called with the process as soon as it is spawned. */
  started(proc: RunningProcess): void;
  /** Why the scheduler killed the run (stop, halt), if it did. */
  killedWith(): RunStatus | undefined;
}

/** How a run ended: its transcript footer, and whether it ended before the agent could act. */
export type RunOutcome = Omit<RunFooter, "type"> & { beforeActing?: true };

/**
 * Runs one run to its end and returns the transcript footer. Never throws:
 * every failure becomes a footer with status `error` (or why it was killed).
 * `beforeActing` marks a run that ended before the agent could act (retry.ts).
 */
export async function executeRun(
  d: ExecuteDeps,
  ctx: RunContext,
  writer: TranscriptWriter,
  control: RunControl,
): Promise<RunOutcome> {
  const startedAt = d.clock.now();
  let cmd: HarnessCommand | undefined;
  let proc: RunningProcess | undefined;
  let timeout: unknown;
  let aliveTimer: unknown;
  let watchTimer: unknown;
  let recorded = false;
  let timedOut = false;
  let watching = false;
  /** Why the process watch ended the run (a lock broken), if it did. */
  let stray: string | undefined;
  /** The parser saw the lock broken first (its error says how). */
  let stoppedByParser = false;
  const stopTimers = () => {
    watching = false;
    if (timeout !== undefined) d.timers.clearTimer(timeout);
    if (aliveTimer !== undefined) d.timers.clearTimer(aliveTimer);
    if (watchTimer !== undefined) d.timers.clearTimer(watchTimer);
    timeout = aliveTimer = watchTimer = undefined;
  };
  let footer: Omit<RunFooter, "type">;
  const acts = new ActWatch();
  try {
    if (d.prepare) ctx = { ...ctx, ...(await d.prepare(ctx)) };
    cmd = d.harness.command(ctx);
    // Only the locked run directory is the runner's to empty; a workspace is
    // the user's folder, which the daemon may read but never write.
    if (ctx.cwd === d.runDir) d.fs.emptyDir(ctx.cwd);
    for (const f of cmd.files) {
      d.fs.mkdir(f.path.slice(0, f.path.lastIndexOf("/")) || "/");
      d.fs.writeFile(f.path, f.text, f.mode);
    }
    const p = d.harness.launch?.(cmd, ctx) ?? d.spawn({
      program: cmd.program,
      args: cmd.args,
      env: cmd.env,
      cwd: cmd.cwd,
      stdin: cmd.stdin,
    });
    proc = p;
    control.started(p);
    timeout = d.timers.setTimer(d.timeoutMs, () => {
      timedOut = true;
      d.log.warn(
        `run ${ctx.runId} timed out after agent.timeout = ${
          formatDuration(d.timeoutMs)
        }; killing it`,
      );
      p.kill();
    });
    if (d.recorder) {
      record(d, { runId: ctx.runId, cmd, process: p, startedAt }, () => !recorded);
      recorded = true;
      const tick = () => {
        aliveTimer = d.timers.setTimer(ALIVE_MS, () => {
          try {
            d.recorder!.alive(d.clock.now());
          } catch (err) {
            d.log.warn(`run ${ctx.runId}: cannot mark it alive: ${errorMessage(err)}`);
          }
          tick();
        });
      };
      tick();
    }
    const rule = d.harness.processRule?.(cmd, ctx);
    if (rule && d.listProcesses) {
      watching = true;
      const list = d.listProcesses;
      // A stray counts once two checks in a row see it (the same pid and command line): a
      // process caught while it exits shows no command line (`[deno]`), and one caught between
      // fork and exec shows its parent's; neither is there at the next check.
      let suspects = new Set<string>();
      const check = async () => {
        let found: ProcessRow[] = [];
        try {
          const seen = strayProcesses(await list(), p.pid, rule);
          const now = new Set(seen.map((r) => `${r.pid} ${r.args}`));
          found = seen.filter((r) => suspects.has(`${r.pid} ${r.args}`));
          suspects = now;
        } catch (err) {
          d.log.warn(`run ${ctx.runId}: cannot list its processes: ${errorMessage(err)}`);
        }
        if (!watching) return;
        if (found.length > 0 && stray === undefined && !stoppedByParser) {
          // The deepest is the command itself; those above it are wrappers (a sandbox).
          const what = found.at(-1)!.args.slice(0, 300);
          stray = `lock broken: ${d.harness.name} started a process a locked run never has ` +
            `(${JSON.stringify(what)}); the run was stopped`;
          d.log.warn(`run ${ctx.runId}: ${stray}`);
          p.kill();
          return;
        }
        watchTimer = d.timers.setTimer(WATCH_MS, check);
      };
      watchTimer = d.timers.setTimer(WATCH_MS, check);
    }
    const parser = d.harness.parser();
    for await (const line of p.lines) {
      writer.line(line);
      for (const ev of parser.push(line)) {
        acts.see(ev);
        logEvent(d.log, ctx.runId, ev);
        // The harness saw something that must not happen (Codex's lock broken): end it now.
        if (ev.type === "stop" && stray === undefined) {
          stoppedByParser = true;
          p.kill();
        }
      }
    }
    const st = await p.status;
    stopTimers();
    const result = parser.finish(st.code);
    const killed = timedOut ? "timeout" : control.killedWith();
    const status: RunStatus = killed ?? (result.ok && stray === undefined ? "ok" : "error");
    let error = result.error;
    if (stray !== undefined && killed === undefined) error = stray;
    else if (killed === "timeout") {
      error = `timed out after agent.timeout = ${formatDuration(d.timeoutMs)}`;
    } else if (killed !== undefined) error = `the run was ${killed}`;
    else if (!result.ok && st.code !== 0 && p.stderrTail().trim() !== "") {
      error = `${error ?? "failed"} (stderr: ${p.stderrTail().trim().slice(-500)})`;
    }
    footer = {
      status,
      exit_code: st.code,
      duration_ms: d.clock.now() - startedAt,
      ...(result.turns !== undefined ? { turns: result.turns } : {}),
      ...(result.costUsd !== undefined ? { cost_usd: result.costUsd } : {}),
      ...(status !== "ok" && error !== undefined ? { error } : {}),
    };
  } catch (err) {
    stopTimers();
    let exitCode: number | null = null;
    if (proc) {
      // The run failed on our side after the spawn: its processes must not
      // outlive it, and the next run must not start beside them.
      proc.kill();
      exitCode = (await proc.status.catch(() => ({ code: null }))).code;
    }
    footer = {
      status: control.killedWith() ?? (timedOut ? "timeout" : "error"),
      exit_code: exitCode,
      duration_ms: d.clock.now() - startedAt,
      error: errorMessage(err),
    };
  } finally {
    stopTimers();
    for (const f of cmd?.files ?? []) {
      try {
        d.fs.remove(f.path);
      } catch (err) {
        d.log.warn(`cannot remove ${f.path}: ${errorMessage(err)}`);
      }
    }
  }
  if (recorded) {
    recorded = false;
    try {
      d.recorder!.ended();
    } catch (err) {
      d.log.warn(`run ${ctx.runId}: cannot clear its record: ${errorMessage(err)}`);
    }
  }
  return acts.endedBeforeActing(footer.status) ? { ...footer, beforeActing: true } : footer;
}

/** Records the spawned run, then adds the leader's start time once `ps` has told it. */
function record(
  d: ExecuteDeps,
  run: { runId: string; cmd: HarnessCommand; process: RunningProcess; startedAt: number },
  isOver: () => boolean,
): void {
  const { runId, cmd, process: p, startedAt } = run;
  const at = new Date(startedAt).toISOString();
  const rec = {
    id: runId,
    pgid: p.pid,
    program: cmd.program,
    args: cmd.args,
    started_at: at,
    alive_at: new Date(d.clock.now()).toISOString(),
  };
  d.recorder!.started(rec);
  d.identify?.(p.pid).then((start) => {
    if (start !== undefined && !isOver()) {
      d.recorder!.started({
        ...rec,
        leader_start_s: start,
        alive_at: new Date(d.clock.now()).toISOString(),
      });
    }
  }).catch((err) => d.log.warn(`run ${runId}: cannot describe its process: ${err}`));
}

function logEvent(log: RunnerLog, runId: string, ev: RunEvent): void {
  switch (ev.type) {
    case "tool_call":
      log.debug(`run ${runId}: tool ${ev.name}`, { run: runId, args: ev.args });
      break;
    case "init": {
      const failed = ev.mcpServers.filter((s) => s.status !== "connected");
      if (failed.length > 0) {
        const which = failed.map((s) => `${s.name} (${s.status})`).join(", ");
        log.warn(`run ${runId}: MCP server ${which} did not connect`);
      }
      break;
    }
    case "error":
      log.debug(`run ${runId}: ${ev.message}`, { run: runId });
      break;
    default:
      break;
  }
}
