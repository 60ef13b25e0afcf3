/**
 * One daemon per data directory. `daemon.lock` is created with create-new
 * semantics and holds the pid; a lock left by a crashed daemon is taken over
 * when nothing answers on mcp.sock and the lock is older than a start-up.
 *
 * @module
 */

import { BusyError } from "../errors.ts";

/** A held lock; `release` removes the file. */
export interface DaemonLock {
  release(): void;
}

/** How long a fresh lock may exist before its daemon must answer on the socket. */
const STARTUP_GRACE_MS = 10_000;

/**
 * Takes the data directory's daemon lock or throws a `BusyError` naming the
 * running daemon's pid. Requires `--allow-read`/`--allow-write` on the lock and
 * the socket grants (to ask whether a daemon answers).
 */
export async function acquireDaemonLock(
  lockPath: string,
  socketPath: string,
  pid: number,
  nowMs: () => number = Date.now,
): Promise<DaemonLock> {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const file = Deno.openSync(lockPath, { write: true, createNew: true, mode: 0o600 });
      file.writeSync(new TextEncoder().encode(`${pid}\n`));
      file.close();
      return {
        release() {
          try {
            Deno.removeSync(lockPath);
          } catch { /* already gone */ }
        },
      };
    } catch (err) {
      if (!(err instanceof Deno.errors.AlreadyExists)) throw err;
    }
    const holder = readPid(lockPath);
    const live = await answers(socketPath);
    const age = lockAge(lockPath, nowMs);
    if (live || age < STARTUP_GRACE_MS) {
      throw new BusyError(
        "daemon.running",
        `another wats daemon${
          holder ? ` (pid ${holder})` : ""
        } already runs on this data directory; ` +
          `stop it first, or use another --data-dir`,
      );
    }
    // A crashed daemon's lock: nothing answers and it is not starting up.
    try {
      Deno.removeSync(lockPath);
    } catch { /* raced with another taker; retry */ }
  }
  throw new BusyError("daemon.lock", `could not take ${lockPath}; remove it if no daemon runs`);
}

function readPid(path: string): number | undefined {
  try {
    const n = Number.parseInt(Deno.readTextFileSync(path).trim(), 10);
    return Number.isFinite(n) ? n : undefined;
  } catch {
    return undefined;
  }
}

function lockAge(path: string, nowMs: () => number): number {
  try {
    const m = Deno.statSync(path).mtime;
    return m ? nowMs() - m.getTime() : Infinity;
  } catch {
    return Infinity;
  }
}

async function answers(socketPath: string): Promise<boolean> {
  try {
    const conn = await Deno.connect({ transport: "unix", path: socketPath });
    conn.close();
    return true;
  } catch {
    return false;
  }
}
