/**
 * The daemon lock is an OS file lock held for the daemon's life: a live holder
 * refuses another, a dead one (however it died) refuses nobody.
 */

import assert from "node:assert/strict";
import { BusyError } from "../../src/errors.ts";
import { acquireDaemonLock, lockHolder } from "../../src/node/lock.ts";

const lockPath = () => `${Deno.makeTempDirSync({ prefix: "wats-lock-" })}/daemon.lock`;

Deno.test("a held lock refuses a second taker, naming the holder's pid", async () => {
  const path = lockPath();
  const held = await acquireDaemonLock(path, 4242);
  try {
    assert.equal(lockHolder(path), 4242);
    await assert.rejects(
      () => acquireDaemonLock(path, 1),
      (err: unknown) =>
        err instanceof BusyError && err.code === "daemon.running" &&
        /another wats daemon \(pid 4242\) already runs/.test(err.message),
    );
    assert.equal(lockHolder(path), 4242, "a refused taker does not touch the pid");
  } finally {
    held.release();
  }
  const next = await acquireDaemonLock(path, 7);
  assert.equal(lockHolder(path), 7);
  next.release();
  assert.throws(() => Deno.statSync(path), Deno.errors.NotFound, "release removes the file");
});

Deno.test("a lock file left by a dead process is taken at once; the pid in it does not matter", async () => {
  const path = lockPath();
  // What a daemon killed with SIGKILL leaves: the file with its pid, no OS lock.
  Deno.writeTextFileSync(path, `${Deno.pid}\n`);
  const lock = await acquireDaemonLock(path, 99);
  assert.equal(lockHolder(path), 99);
  lock.release();
});

Deno.test("a taker that waits gets the lock once the holder lets go", async () => {
  const path = lockPath();
  const held = await acquireDaemonLock(path, 1);
  setTimeout(() => held.release(), 200);
  const lock = await acquireDaemonLock(path, 2, { waitMs: 30_000 });
  assert.equal(lockHolder(path), 2);
  lock.release();
});

Deno.test("a taker that waits gives up at its deadline, naming the holder", async () => {
  const path = lockPath();
  const held = await acquireDaemonLock(path, 1);
  let t = 0;
  try {
    await assert.rejects(
      () =>
        acquireDaemonLock(path, 2, {
          waitMs: 1_000,
          now: () => t,
          sleep: (ms) => {
            t += ms;
            return Promise.resolve();
          },
        }),
      /another wats daemon \(pid 1\)/,
    );
    assert.ok(t >= 1_000);
  } finally {
    held.release();
  }
});

Deno.test("a process killed with SIGKILL holds no lock", async () => {
  const path = lockPath();
  const holder = new Deno.Command(Deno.execPath(), {
    args: [
      "eval",
      `const f = Deno.openSync(${
        JSON.stringify(path)
      }, { read: true, write: true, create: true });` +
      // An interval keeps it running (a never-settling await would end it).
      `f.lockSync(true); console.log("locked"); setInterval(() => {}, 60_000);`,
    ],
    stdout: "piped",
  }).spawn();
  const reader = holder.stdout.pipeThrough(new TextDecoderStream()).getReader();
  assert.match((await reader.read()).value ?? "", /locked/);
  await assert.rejects(() => acquireDaemonLock(path, 5), BusyError);
  holder.kill("SIGKILL");
  await holder.status;
  await reader.cancel();
  const lock = await acquireDaemonLock(path, 5);
  lock.release();
});
