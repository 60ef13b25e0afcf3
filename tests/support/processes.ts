/**
 * What the tests see of processes: the living members of a process group (a
 * run's whole tree, src/runner/spawn.ts), as `ps` lists them.
 */

/**
 * The living processes of process group `pgid`, as `pid args`. Zombies are left out: they are
 * dead, only not reaped yet (where PID 1 does not reap, as in some containers, they stay listed).
 */
export async function groupMembers(pgid: number): Promise<string[]> {
  const out = await new Deno.Command("ps", {
    args: ["-eo", "pid=,pgid=,stat=,args="],
    stdout: "piped",
  }).output();
  return new TextDecoder().decode(out.stdout).split("\n")
    .map((l) => l.trim().split(/\s+/))
    .filter((w) => w.length > 3 && Number(w[1]) === pgid && !w[2]!.startsWith("Z"))
    .map((w) => `${w[0]} ${w.slice(3).join(" ")}`);
}
