/**
 * The processes a run started, as `ps` shows them, and those its harness did
 * not expect: the second line of a harness lock that does not depend on the
 * agent CLI reporting what it ran (docs/safety.md, "Codex lock"). Codex 0.171
 * can run a shell command without a `command_execution` item in its event
 * stream (docs/harness_facts.md), so the runner also looks at the processes
 * themselves and ends a run in which one it did not expect appears.
 *
 * A run's processes are the descendants of its leader (by parent pid) and the
 * members of its process group: a command Codex runs leaves the group
 * (`bwrap --new-session`), but not the tree. `ps` rather than /proc, as in
 * orphan.ts: the daemon may not read /proc.
 *
 * A check sees the processes alive at that moment, and a stray counts once two checks in a row
 * see it (src/runner/execute.ts): one that lives for less than two checks is not seen (the event
 * stream is the first line).
 *
 * @module
 */

import type { ProcessRule } from "./harness.ts";
import { PS_PROGRAM } from "./orphan.ts";

/** One living process, as `ps` shows it. */
export interface ProcessRow {
  pid: number;
  ppid: number;
  pgid: number;
  /** Its command line. */
  args: string;
}

/**
 * The living processes of the machine (zombies, dead but not yet reaped, are
 * left out). Requires `--allow-run` for `ps`.
 */
export async function listProcesses(): Promise<ProcessRow[]> {
  const out = await new Deno.Command(PS_PROGRAM, {
    args: ["-e", "-o", "pid=", "-o", "ppid=", "-o", "pgid=", "-o", "stat=", "-o", "args="],
    env: { LC_ALL: "C" },
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).output();
  if (!out.success) throw new Error(`${PS_PROGRAM} -e exited with code ${out.code}`);
  const rows: ProcessRow[] = [];
  for (const line of new TextDecoder().decode(out.stdout).split("\n")) {
    const m = /^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\S+)\s+(.*)$/.exec(line);
    if (!m) continue;
    const [, pid, ppid, pgid, stat = "", args = ""] = m;
    if (stat.startsWith("Z")) continue;
    rows.push({ pid: Number(pid), ppid: Number(ppid), pgid: Number(pgid), args });
  }
  return rows;
}

/**
 * The processes of the run led by `leader` that `rule` does not expect, top
 * down (a parent before what it started). The leader is the run's own; a
 * process the rule calls `run` is too, and what it starts is judged in turn;
 * one it calls `helper` is the CLI's own tool, with everything under it. What
 * an unexpected process started is reported as well (the command itself
 * usually sits below a sandbox wrapper).
 */
export function strayProcesses(
  rows: readonly ProcessRow[],
  leader: number,
  rule: ProcessRule,
): ProcessRow[] {
  const children = new Map<number, ProcessRow[]>();
  for (const r of rows) {
    if (r.pid === r.ppid) continue;
    children.set(r.ppid, [...children.get(r.ppid) ?? [], r]);
  }
  const seen = new Set<number>();
  const stray: ProcessRow[] = [];
  const visit = (r: ProcessRow, judged: boolean) => {
    if (seen.has(r.pid)) return;
    seen.add(r.pid);
    if (judged) {
      const verdict = r.pid === leader ? "run" : rule(r.args);
      if (verdict === "helper") {
        for (const c of descendants(children, r.pid)) seen.add(c);
        return;
      }
      if (verdict === undefined) {
        stray.push(r);
        judged = false;
      }
    } else stray.push(r);
    for (const c of children.get(r.pid) ?? []) visit(c, judged);
  };
  const top = rows.find((r) => r.pid === leader);
  if (top) visit(top, true);
  // Left in the group by a parent that exited (no longer below the leader).
  for (const r of rows) if (r.pgid === leader) visit(r, true);
  return stray;
}

function descendants(children: Map<number, ProcessRow[]>, pid: number): number[] {
  const out: number[] = [];
  for (const c of children.get(pid) ?? []) out.push(c.pid, ...descendants(children, c.pid));
  return out;
}
