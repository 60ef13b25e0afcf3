/**
 * One daemon per data directory. The daemon holds an exclusive OS file lock
 * (flock semantics: `Deno.FsFile.tryLock`) on `daemon.lock` for its whole
 * life, and writes its pid there for people and error messages. The kernel
 * drops the lock when the process ends, however it ends, so a daemon killed
 * with SIGKILL never blocks the next start; a pid file alone could not tell a
 * dead owner from a live one.
 *
 * @module
 */

import { BusyError } from "../errors.ts";

/** A held lock; `release` removes the file and drops the lock. */
export interface DaemonLock {
  release(): void;
}

/** How often {@linkcode acquireDaemonLock} looks again while it waits. */
const RETRY_MS = 50;

/** Options of {@linkcode acquireDaemonLock}. */
export interface AcquireOptions {
  /** Keep trying this long before giving up (a daemon that was asked to stop); 0: once. */
  waitMs?: number;
  /** Milliseconds, for the deadline. */
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

/**
 * Takes the data directory's daemon lock or throws a `BusyError` naming the
 * running daemon's pid. Requires `--allow-read` and `--allow-write` on `lockPath`.
 */
export async function acquireDaemonLock(
  lockPath: string,
  pid: number,
  opts: AcquireOptions = {},
): Promise<DaemonLock> {
  const now = opts.now ?? (() => performance.now());
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const deadline = now() + (opts.waitMs ?? 0);
  while (true) {
    const lock = tryLock(lockPath, pid);
    if (lock) return lock;
    if (now() >= deadline) {
      const holder = lockHolder(lockPath);
      throw new BusyError(
        "daemon.running",
        `another wats daemon${
          holder ? ` (pid ${holder})` : ""
        } already runs on this data directory; ` +
          `stop it first, or use another --data-dir`,
      );
    }
    await sleep(RETRY_MS);
  }
}

/** The pid written in the lock file, when it names one. Requires `--allow-read` on it. */
export function lockHolder(lockPath: string): number | undefined {
  try {
    const n = Number.parseInt(Deno.readTextFileSync(lockPath).trim(), 10);
    return Number.isFinite(n) ? n : undefined;
  } catch {
    return undefined;
  }
}

/** The lock, or undefined while another process holds it. */
function tryLock(lockPath: string, pid: number): DaemonLock | undefined {
  // Not truncated on open: the holder's pid must stay readable to others.
  const file = Deno.openSync(lockPath, { read: true, write: true, create: true, mode: 0o600 });
  let locked = false;
  try {
    locked = file.tryLockSync(true);
    // A releasing daemon removes the file before it unlocks: the lock we hold
    // may be on a file that is no longer at the path. Only the file at the
    // path counts; try again.
    if (!locked || !samePath(file, lockPath)) {
      file.close();
      return locked ? tryLock(lockPath, pid) : undefined;
    }
    file.truncateSync(0);
    // A few bytes to a regular file: one write takes them all.
    file.writeSync(new TextEncoder().encode(`${pid}\n`));
  } catch (err) {
    file.close();
    throw err;
  }
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      try {
        Deno.removeSync(lockPath);
      } catch { /* already gone */ }
      file.close();
    },
  };
}

function samePath(file: Deno.FsFile, path: string): boolean {
  try {
    return file.statSync().ino === Deno.statSync(path).ino;
  } catch {
    return false;
  }
}
