/**
 * How a starting daemon takes the lock from a node `wats mcp` started, with
 * the lock, socket and clock replaced (the real processes are in
 * daemon_cli_test.ts and e2e/getting_started_test.ts).
 */

import assert from "node:assert/strict";
import { type LockPorts, takeDaemonLock, TAKEOVER_WAIT_MS } from "../../src/cli/daemon.ts";
import { NoDaemonError } from "../../src/mcp/socket_client.ts";
import { BusyError, WatsError } from "../../src/errors.ts";
import type { DaemonLock } from "../../src/node/lock.ts";

const LOCK: DaemonLock = { release() {} };

function busy(): BusyError {
  return new BusyError("daemon.running", "another wats daemon (pid 41) already runs");
}

/**
 * Ports whose lock is held until the holder answers a takeover request with
 * "done"; `answers` are its answers in turn, the last one repeating.
 */
function fakePorts(answers: Array<"absent" | "done" | "refused">) {
  let t = 0;
  let stopped = false;
  const log = { asks: 0, said: [] as string[], waits: [] as number[] };
  const ports: LockPorts = {
    acquire: (waitMs) => {
      log.waits.push(waitMs);
      return stopped ? Promise.resolve(LOCK) : Promise.reject(busy());
    },
    holder: () => 41,
    askToStop: () => {
      const a = answers[Math.min(log.asks++, answers.length - 1)];
      if (a === "absent") return Promise.reject(new NoDaemonError("/d/mcp.sock"));
      if (a === "refused") {
        return Promise.reject(new WatsError("daemon.refused", "the daemon refused: foreground"));
      }
      stopped = true;
      return Promise.resolve();
    },
    sleep: (ms) => {
      t += ms;
      return Promise.resolve();
    },
    now: () => t,
    say: (line) => log.said.push(line),
  };
  return { ports, log };
}

Deno.test("a background node asked to stop gives up the lock, and one line says so", async () => {
  const { ports, log } = fakePorts(["done"]);
  assert.equal(await takeDaemonLock(false, ports), LOCK);
  assert.equal(log.asks, 1);
  assert.deepEqual(log.waits, [0, TAKEOVER_WAIT_MS]);
  assert.deepEqual(log.said, [
    "wats: took over from the background node that `wats mcp` started (pid 41); it has stopped",
  ]);
});

Deno.test("a holder still starting (no socket yet) is asked again until it answers", async () => {
  const { ports, log } = fakePorts(["absent", "absent", "absent", "done"]);
  assert.equal(await takeDaemonLock(false, ports), LOCK);
  assert.equal(log.asks, 4);
  assert.equal(log.said.length, 1);
});

Deno.test("a foreground node refuses: the start fails naming it, and nothing is said about a takeover", async () => {
  const { ports, log } = fakePorts(["refused"]);
  await assert.rejects(() => takeDaemonLock(false, ports), /another wats daemon \(pid 41\)/);
  assert.equal(log.asks, 1);
  assert.deepEqual(log.said, []);
});

Deno.test("a holder that never opens its socket: the start fails naming it once the wait is over", async () => {
  const { ports, log } = fakePorts(["absent"]);
  await assert.rejects(() => takeDaemonLock(false, ports), /another wats daemon \(pid 41\)/);
  assert.ok(log.asks > 1);
  assert.deepEqual(log.said, []);
});

Deno.test("a node started by `wats mcp` never takes over", async () => {
  const { ports, log } = fakePorts(["done"]);
  await assert.rejects(() => takeDaemonLock(true, ports), BusyError);
  assert.equal(log.asks, 0);
});
