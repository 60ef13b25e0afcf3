/**
 * The smoke test of a wats build, run by the release workflow on the native
 * binary and by smoke_test.ts on the source command: `--version`, `config
 * list`, a daemon start and stop, and `wats mcp` answering `tools/list`. The
 * `wats mcp` step starts with no node running, so the bridge must start the
 * background node by running itself; the check reads that node's executable
 * from /proc (Linux) and expects the build's own program, never another.
 *
 * Run: `deno run --allow-all tests/build/smoke.ts dist/wats-x86_64-unknown-linux-gnu [COMMIT]`
 *
 * @module
 */

import assert from "node:assert/strict";
import { VERSION } from "../../src/version.ts";
import { startIsolated, tempDataDir, type WatsResult } from "../support/cli.ts";

/** What the smoke test expects of the build. */
export interface SmokeOptions {
  /** The git commit `--version` must name; unset: not checked. */
  commit?: string;
  /** The program the background node must run as (its /proc exe); unset: `command[0]`. */
  exe?: string;
  /** Progress lines. */
  log?: (line: string) => void;
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch {
    return false;
  }
}

/** Runs a command to its end, isolated like every wats the tests start. */
async function runIsolated(command: string[]): Promise<WatsResult> {
  const p = startIsolated(command, { stdin: "" });
  await p.process.status;
  return await p.stop();
}

/** Polls `check` every 100 ms, up to `tries` times; a bound on a real process, not a timing test. */
async function until(what: string, check: () => Promise<boolean>, tries = 600): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`gave up waiting: ${what}`);
}

/** Runs the smoke test against `command` (the binary, or `deno run … main.ts`). Throws on failure. */
export async function smoke(command: string[], opts: SmokeOptions = {}): Promise<void> {
  const [program] = command;
  if (program === undefined) {
    throw new Error("error: smoke needs a command: pass the binary or `deno run … main.ts`");
  }
  const log = opts.log ?? (() => {});
  const dataDir = tempDataDir();
  const run = (args: string[]) => runIsolated([...command, "--data-dir", dataDir, ...args]);
  try {
    const version = await run(["--version"]);
    assert.equal(version.code, 0, version.stderr);
    assert.match(
      version.stdout,
      new RegExp(`^wats ${VERSION.replaceAll(".", "\\.")}\ndeno \\d+\\.\\d+\\.\\d+\ncommit `),
    );
    if (opts.commit !== undefined) {
      assert.match(version.stdout, new RegExp(`commit ${opts.commit}\n`));
    }
    log(`ok   --version: ${version.stdout.trim().replaceAll("\n", ", ")}`);

    const config = await run(["config", "list"]);
    assert.equal(config.code, 0, config.stderr);
    assert.match(config.stdout, /agent\.runtime/);
    log("ok   config list");

    const daemon = startIsolated([...command, "--data-dir", dataDir, "node"]);
    try {
      await daemon.waitForLine((l) => l.includes('"event":"started"'));
      assert.ok(await exists(`${dataDir}/mcp.sock`), "the daemon listens on mcp.sock");
    } finally {
      const end = await daemon.stop("SIGTERM");
      assert.equal(end.code, 0, end.stderr);
    }
    assert.equal(await exists(`${dataDir}/daemon.lock`), false, "the daemon released its lock");
    log("ok   daemon started and stopped on SIGTERM");

    await mcpToolsList(command, dataDir, opts.exe ?? program);
    log("ok   wats mcp answered tools/list through a background node it started itself");
  } finally {
    await Deno.remove(dataDir, { recursive: true }).catch(() => {});
  }
}

async function mcpToolsList(command: string[], dataDir: string, exe: string): Promise<void> {
  const mcp = startIsolated([...command, "--data-dir", dataDir, "mcp"]);
  let nodePid: number | undefined;
  try {
    const send = (msg: unknown) => mcp.write(JSON.stringify(msg) + "\n");
    await send({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "wats-smoke", version: "0" },
      },
    });
    await mcp.waitForLine((l) => l.includes('"id":1'));
    await send({ jsonrpc: "2.0", method: "notifications/initialized" });
    await send({ jsonrpc: "2.0", id: 2, method: "tools/list" });
    const reply = JSON.parse(await mcp.waitForLine((l) => l.includes('"id":2')));
    const names = (reply.result.tools as Array<{ name: string }>).map((t) => t.name);
    assert.ok(names.includes("ask") && names.includes("status"), `tools: ${names.join(", ")}`);

    nodePid = Number((await Deno.readTextFile(`${dataDir}/daemon.lock`)).trim());
    if (Deno.build.os === "linux") {
      const running = await Deno.realPath(`/proc/${nodePid}/exe`);
      assert.equal(running, await Deno.realPath(exe), "the background node runs this build");
    }
  } finally {
    await mcp.stop("SIGTERM");
    if (nodePid !== undefined) {
      try {
        Deno.kill(nodePid, "SIGTERM");
      } catch {
        // Already gone.
      }
      await until(
        "the background node to stop",
        async () => !(await exists(`${dataDir}/daemon.lock`)),
      );
    }
  }
}

if (import.meta.main) {
  const [binary, commit] = Deno.args;
  if (binary === undefined) {
    console.error("usage: smoke.ts BINARY [COMMIT]");
    Deno.exit(2);
  }
  const path = await Deno.realPath(binary);
  await smoke([path], { commit, log: (l) => console.log(l) });
  console.log(`smoke test passed: ${path}`);
}
