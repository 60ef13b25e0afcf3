/**
 * The throwaway data directories of `wats try` (`$TMPDIR/wats-try-*`): made by the
 * launcher, which holds an OS file lock on `try.lock` inside for as long as it runs,
 * and removed when it ends. A `wats try` killed with SIGKILL removes nothing (its
 * throwaway node stops by itself: `--started-by-try`), so the next one removes every
 * `wats-try-*` directory whose lock nobody holds — the kernel dropped it with its
 * owner, so a live `wats try` elsewhere is never touched.
 *
 * Requires `--allow-read` and `--allow-write` on the temporary directory.
 *
 * @module
 */

/** The prefix of every `wats try` directory. */
export const TRY_DIR_PREFIX = "wats-try-";

/** The lock file the owning launcher holds inside its directory. */
export const TRY_LOCK = "try.lock";

/** A directory made for one `wats try`; `remove` deletes it and drops the lock. */
export interface TryDir {
  path: string;
  /** The stale directories of earlier `wats try` runs removed before it was made. */
  removedStale: string[];
  remove(): void;
}

/** Makes a locked `wats try` directory, first removing stale ones beside it. */
export function makeTryDir(): TryDir {
  const path = Deno.makeTempDirSync({ prefix: TRY_DIR_PREFIX });
  const lock = Deno.openSync(`${path}/${TRY_LOCK}`, { read: true, write: true, create: true });
  lock.lockSync(true);
  const parent = path.slice(0, path.lastIndexOf("/"));
  const removedStale = removeStaleTryDirs(parent, path);
  let removed = false;
  return {
    path,
    removedStale,
    remove() {
      if (removed) return;
      removed = true;
      try {
        Deno.removeSync(path, { recursive: true });
      } finally {
        lock.close();
      }
    },
  };
}

/**
 * Removes the `wats-try-*` directories of `parent` (but `keep`) whose `try.lock` no
 * process holds; returns their paths. A directory with no `try.lock` yet (its launcher
 * is between making and locking it, or it is not ours) is left alone.
 */
export function removeStaleTryDirs(parent: string, keep?: string): string[] {
  const removed: string[] = [];
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync(parent)];
  } catch {
    return removed;
  }
  for (const e of entries) {
    const dir = `${parent}/${e.name}`;
    if (!e.isDirectory || !e.name.startsWith(TRY_DIR_PREFIX) || dir === keep) continue;
    let file: Deno.FsFile;
    try {
      file = Deno.openSync(`${dir}/${TRY_LOCK}`, { read: true, write: true });
    } catch {
      continue;
    }
    let stale = false;
    try {
      stale = file.tryLockSync(true);
    } catch {
      stale = false;
    } finally {
      file.close();
    }
    if (!stale) continue;
    try {
      Deno.removeSync(dir, { recursive: true });
      removed.push(dir);
    } catch {
      // Another `wats try` removed it first, or it is not ours to remove.
    }
  }
  return removed;
}
