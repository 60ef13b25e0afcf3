/**
 * The data directory is private: the folder 0700, its files 0600. config.toml can
 * hold API keys (docs/acp.md) and store.db every post and draft, so a directory
 * made by hand (or by an older wats, or restored from a backup) with mode 0755 and
 * files 0644 would let every user of the machine read them.
 *
 * Every command that writes the data directory tightens it when it starts (the
 * launcher's data-dir check): the folder loses its group and other bits, and so do
 * the regular files directly in it. Symlinks are left alone (their target is not
 * ours to change), and so are the subfolders wats makes itself (created 0700, and
 * unreachable to others through a 0700 parent anyway). Decision and wording:
 * docs/decisions/node.md, "Data directory".
 *
 * Requires `--allow-read` and `--allow-write` on the directory.
 *
 * @module
 */

/** What {@linkcode makeDataDirPrivate} changed: each path with its old and new mode. */
export interface ModeChange {
  path: string;
  from: number;
  to: number;
}

/**
 * Removes the group and other permission bits of `dir` and of the regular files
 * directly in it. Returns what it changed (empty when all was private already).
 *
 * @throws {Deno.errors.PermissionDenied} when a path is not the user's to change.
 */
export function makeDataDirPrivate(dir: string): ModeChange[] {
  const changed: ModeChange[] = [];
  const tighten = (path: string, info: Deno.FileInfo) => {
    const mode = (info.mode ?? 0) & 0o7777;
    if ((mode & 0o077) === 0) return;
    const to = mode & 0o700;
    Deno.chmodSync(path, to);
    changed.push({ path, from: mode, to });
  };
  tighten(dir, Deno.statSync(dir));
  const entries = [...Deno.readDirSync(dir)].sort((a, b) => a.name < b.name ? -1 : 1);
  for (const entry of entries) {
    if (!entry.isFile) continue;
    const path = `${dir}/${entry.name}`;
    tighten(path, Deno.lstatSync(path));
  }
  return changed;
}

/** The one line a command prints after tightening an open folder, e.g. for stderr. */
export function describeModeChanges(dir: string, changed: ModeChange[]): string {
  const octal = (m: number) => m.toString(8).padStart(4, "0");
  const what = changed.map((c) =>
    `${c.path === dir ? "the folder" : c.path.slice(dir.length + 1)} ${octal(c.from)} → ${
      octal(c.to)
    }`
  );
  return `wats: made the data directory ${dir} private (${what.join(", ")}): ` +
    `other users could read it`;
}
