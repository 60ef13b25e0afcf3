/**
 * The probe that runs before a sandbox is built, inside the sandbox program itself: it records
 * this node's data dir in the person's list (`dataDirList`) and reads the list back, copies the
 * person's login into the agent's private home, follows the links of the PATH folders under
 * home, and says which paths exist (`stat -L`: a secret reached by a symlink is hidden where the
 * link leads too). The daemon so needs no read grant on the secrets, the home or the list, and
 * the same run proves the sandbox works here.
 *
 * Requires `--allow-run` on the sandbox program (`bwrap`, `sandbox-exec`).
 *
 * @module
 */

import { errorMessage } from "../error_message.ts";
import type { PathKind, Probed } from "./sandbox.ts";
import type { Seed } from "./sandbox_home.ts";

/** What the probe is asked to do besides `stat`. */
export interface ProbeTask {
  /** The per-user data dir list and the data dir to record in it; none when home is unknown. */
  list?: { file: string; dataDir: string };
  /** Copied (or removed when the source is gone); the folder of each `to` is writable. */
  seeds?: readonly Seed[];
  /** Writable for the probe: home (the list's folder is made there) and the private home. */
  writable?: readonly string[];
  /** Folders whose links are followed (the PATH folders under home). */
  resolve?: readonly string[];
  /** Paths whose kind is asked. */
  paths: readonly string[];
}

/** The probe's outcome; `problem` says why the sandbox cannot run when it cannot. */
export interface ProbeResult extends Probed {
  problem?: string;
}

// Positional: list file, data dir, n seeds, 2n seed paths, m folders, m folders, paths. Every
// path is an argument, never part of the script.
const SCRIPT = `
list=$1 data=$2 n=$3; shift 3
if [ -n "$list" ]; then
  known=
  if [ -f "$list" ]; then
    while IFS= read -r d; do
      [ "$d" = "$data" ] && known=1
      [ -d "$d" ] && printf 'R|%s\\n' "$d"
    done < "$list"
  fi
  if [ -z "$known" ]; then
    mkdir -p -- "\${list%/*}" 2>/dev/null && printf '%s\\n' "$data" >> "$list" 2>/dev/null
  fi
fi
while [ "$n" -gt 0 ]; do
  from=$1 to=$2; shift 2; n=$((n - 1))
  # The agent wrote its private home: a link at "$to" is removed, never followed (its folder is
  # made a plain one by the daemon first). BSD install has no -D: then cp.
  rm -f -- "$to"
  if [ -f "$from" ]; then
    install -m 600 -- "$from" "$to" 2>/dev/null ||
      { cp -- "$from" "$to" && chmod 600 -- "$to"; }
  fi
done
m=$1; shift
while [ "$m" -gt 0 ]; do
  [ -d "$1" ] && find "$1" -maxdepth 1 -type l -exec readlink -f -- {} + | sed 's/^/L|/'
  shift; m=$((m - 1))
done
`;

/** Runs the probe of `task` under `program` on `os`. */
export async function probeSandbox(
  os: string,
  program: string,
  task: ProbeTask,
): Promise<ProbeResult> {
  const kinds = new Map<string, PathKind>();
  const empty: ProbeResult = { kinds, dataDirs: [], linked: [] };
  const stat = os === "darwin" ? `stat -L -f '%HT|%N' -- "$@"` : `stat -L -c '%F|%n' -- "$@"`;
  const seeds = task.seeds ?? [];
  const resolve = task.resolve ?? [];
  const positional = [
    task.list?.file ?? "",
    task.list?.dataDir ?? "",
    String(seeds.length),
    ...seeds.flatMap((s) => [s.from, s.to]),
    String(resolve.length),
    ...resolve,
    "/",
    ...task.paths,
  ];
  const script = ["sh", "-c", SCRIPT + stat, "sh", ...positional];
  const writable = task.writable ?? [];
  const args = os === "darwin" ? ["-p", "(version 1)(allow default)", ...script] : [
    "--ro-bind",
    "/",
    "/",
    ...writable.flatMap((w) => ["--bind-try", w, w]),
    "--dev",
    "/dev",
    "--unshare-pid",
    "--cap-drop",
    "ALL",
    "--",
    ...script,
  ];
  let out: Deno.CommandOutput;
  try {
    out = await new Deno.Command(program, { args, stdin: "null", stdout: "piped", stderr: "piped" })
      .output();
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) {
      return { ...empty, problem: `${program} is not on PATH` };
    }
    return { ...empty, problem: `${program} cannot start: ${errorMessage(err)}` };
  }
  const dec = new TextDecoder();
  const stderr = dec.decode(out.stderr).trim();
  // A missing path is stat's own complaint; anything from the sandbox program means it failed.
  const failed = stderr.split("\n").find((l) =>
    l.startsWith(`${program}:`) || /^sandbox-exec/.test(l)
  );
  if (failed !== undefined) return { ...empty, problem: failed };
  const dataDirs: string[] = [];
  const linked: string[] = [];
  for (const line of dec.decode(out.stdout).split("\n")) {
    const bar = line.indexOf("|");
    if (bar < 0) continue;
    const head = line.slice(0, bar), rest = line.slice(bar + 1);
    if (head === "R") dataDirs.push(rest);
    else if (head === "L") linked.push(rest);
    else kinds.set(rest, head.toLowerCase() === "directory" ? "dir" : "file");
  }
  // "/" is always there: without it, nothing ran inside.
  if (!kinds.has("/")) {
    return { ...empty, problem: `${program} exited ${out.code}: ${stderr.slice(0, 200)}` };
  }
  kinds.delete("/");
  return { kinds, dataDirs, linked };
}
