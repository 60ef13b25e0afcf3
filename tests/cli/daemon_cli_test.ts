/**
 * The daemon as a user meets it (issue 2): the banner, `wats node`'s JSON
 * lines, a clean stop on SIGINT/SIGTERM, and one daemon per data directory.
 */

import assert from "node:assert/strict";
import { DENO_JSON, denoDir, runWats, startWats, tempDataDir } from "../support/cli.ts";

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch {
    return false;
  }
}

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  Deno.test(`\`wats node\` prints its banner and JSON lines, and stops cleanly on ${signal}`, async () => {
    const dir = tempDataDir();
    const node = startWats(["--data-dir", dir, "node"]);
    const started = JSON.parse(await node.waitForLine((l) => l.includes('"event":"started"')));
    assert.match(started.node, /^[0-9a-f]{16}$/);
    assert.equal(started.dataDir, dir);
    assert.equal(started.socket, `${dir}/mcp.sock`);
    assert.ok(await exists(`${dir}/mcp.sock`));
    const banner = node.stderr();
    assert.match(banner, new RegExp(`node ${started.node}`));
    for (const [name, npub] of Object.entries(started.profiles as Record<string, string>)) {
      assert.match(npub, /^npub1/);
      assert.ok(banner.includes(`${name} ${npub}`), `banner lists ${name} with its npub`);
    }
    assert.match(banner, new RegExp(`data +${dir}`));
    assert.match(banner, /agent +no agent/);
    assert.match(banner, /network +local only/);
    const end = await node.stop(signal);
    assert.equal(end.code, 0, end.stderr);
    assert.ok(node.stdoutLines.some((l) => l.includes('"event":"stopped"')));
    assert.equal(await exists(`${dir}/mcp.sock`), false, "socket removed");
    assert.equal(await exists(`${dir}/daemon.lock`), false, "lock released");
    assert.equal(await exists(`${dir}/store.db`), true, "store kept");
    assert.equal((await Deno.stat(`${dir}/node.key`)).mode! & 0o777, 0o600);
  });
}

Deno.test("a second daemon on the same data directory exits with an error naming the running pid", async () => {
  const dir = tempDataDir();
  const first = startWats(["--data-dir", dir, "node"]);
  try {
    const started = JSON.parse(await first.waitForLine((l) => l.includes('"event":"started"')));
    const second = await runWats(["--data-dir", dir]);
    assert.equal(second.code, 1);
    assert.equal(second.stdout, "");
    assert.match(
      second.stderr,
      new RegExp(`another wats daemon \\(pid ${started.pid}\\) already runs`),
    );
  } finally {
    await first.stop();
  }
});

Deno.test("the node key survives restarts: the same node id and profile keys", async () => {
  const dir = tempDataDir();
  const ids: string[] = [];
  for (let i = 0; i < 2; i++) {
    const node = startWats(["--data-dir", dir, "node"]);
    const s = JSON.parse(await node.waitForLine((l) => l.includes('"event":"started"')));
    ids.push(`${s.node} ${JSON.stringify(s.profiles)}`);
    await node.stop();
  }
  assert.equal(ids[0], ids[1]);
});

Deno.test("unknown daemon flags and bad flag values are usage errors that name them", async () => {
  const bad = await runWats(["--data-dir", tempDataDir(), "--evry", "5m"]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--evry/);
  const value = await runWats(["--data-dir", tempDataDir(), "--every", "soon"]);
  assert.equal(value.code, 1);
  assert.match(value.stderr, /--every/);
  assert.match(value.stderr, /agent\.every/);
});

Deno.test("Ctrl-C in a terminal running `deno task wats` stops the node cleanly, though the signal arrives twice", async () => {
  const dir = tempDataDir();
  const home = await Deno.makeTempDir({ prefix: "wats-home-" });
  // A terminal signals the whole foreground process group, and `deno task`
  // forwards the signal to its child as well.
  const child = new Deno.Command(Deno.execPath(), {
    args: ["task", "--quiet", "--config", DENO_JSON, "wats", "--data-dir", dir, "node"],
    env: { HOME: home, DENO_DIR: denoDir(), PATH: Deno.env.get("PATH") ?? "", NO_COLOR: "1" },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    detached: true,
  }).spawn();
  const out = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes('"event":"started"')) {
    const { value, done } = await out.read();
    if (done) break;
    text += value;
  }
  Deno.kill(-child.pid, "SIGINT");
  while (!(await out.read()).done) { /* drain */ }
  await child.status;
  const err = new TextDecoder().decode(await new Response(child.stderr).arrayBuffer());
  assert.match(err, /stopping on SIGINT/);
  assert.equal(await exists(`${dir}/mcp.sock`), false, "socket removed");
  assert.equal(await exists(`${dir}/daemon.lock`), false, "lock released");
  await Deno.remove(home, { recursive: true });
});

Deno.test("--agent codex without a Codex on PATH is refused with the reason; nothing is left running", async () => {
  const dir = tempDataDir();
  const r = await runWats(["--data-dir", dir, "--agent", "codex"], {
    env: { PATH: "/nonexistent" },
  });
  assert.equal(r.code, 1);
  assert.equal(r.stdout, "");
  assert.match(r.stderr, /agent\.runtime = "codex" is refused: .*codex.*not on PATH/);
  assert.equal(await exists(`${dir}/daemon.lock`), false, "the lock is released");
  assert.equal(await exists(`${dir}/mcp.sock`), false);
});

function alive(pid: number): boolean {
  try {
    Deno.kill(pid, "SIGCONT");
    return true;
  } catch {
    return false;
  }
}

Deno.test("a daemon killed with SIGKILL is replaced at once: its lock dies with it", async () => {
  const dir = tempDataDir();
  const first = startWats(["--data-dir", dir, "node"]);
  const started = JSON.parse(await first.waitForLine((l) => l.includes('"event":"started"')));
  first.process.kill("SIGKILL");
  await first.stop();
  // The crashed daemon leaves its lock file (naming its pid) and its socket behind.
  assert.equal((await Deno.readTextFile(`${dir}/daemon.lock`)).trim(), String(started.pid));
  const second = startWats(["--data-dir", dir, "node"]);
  try {
    // Started, not refused: a refusal ends the process and closes stdout first.
    const again = JSON.parse(await second.waitForLine((l) => l.includes('"event":"started"')));
    assert.notEqual(again.pid, started.pid);
    assert.equal((await Deno.readTextFile(`${dir}/daemon.lock`)).trim(), String(again.pid));
    // And a live daemon still refuses a second one.
    const third = await runWats(["--data-dir", dir]);
    assert.equal(third.code, 1);
    assert.match(
      third.stderr,
      new RegExp(`another wats daemon \\(pid ${again.pid}\\) already runs`),
    );
  } finally {
    const end = await second.stop();
    assert.equal(end.code, 0, end.stderr);
  }
});

Deno.test("a foreground `wats` takes over from a node `wats mcp` started, and says so in one line", async () => {
  const dir = tempDataDir();
  // What `wats mcp` starts when no node runs.
  const background = startWats(["--data-dir", dir, "node", "--agent", "none", "--started-by-mcp"]);
  const bg = JSON.parse(await background.waitForLine((l) => l.includes('"event":"started"')));
  const foreground = startWats(["--data-dir", dir, "node"]);
  try {
    const fg = JSON.parse(await foreground.waitForLine((l) => l.includes('"event":"started"')));
    assert.notEqual(fg.pid, bg.pid);
    const said = foreground.stderr().split("\n").filter((l) => l.includes("took over"));
    assert.deepEqual(said, [
      `wats: took over from the background node that \`wats mcp\` started (pid ${bg.pid}); it has stopped`,
    ]);
    const old = await background.stop();
    assert.equal(old.code, 0, old.stderr);
    const stopped = background.stdoutLines.find((l) => l.includes('"event":"stopped"'));
    assert.equal(JSON.parse(stopped!).reason, "takeover");
    assert.equal((await Deno.readTextFile(`${dir}/daemon.lock`)).trim(), String(fg.pid));
    assert.ok(await exists(`${dir}/mcp.sock`), "the new node serves the socket");
  } finally {
    await background.stop();
    const end = await foreground.stop();
    assert.equal(end.code, 0, end.stderr);
  }
});

Deno.test("a foreground daemon is never taken over: the second `wats` fails and the first keeps running", async () => {
  const dir = tempDataDir();
  const first = startWats(["--data-dir", dir, "node"]);
  try {
    const started = JSON.parse(await first.waitForLine((l) => l.includes('"event":"started"')));
    const second = await runWats(["--data-dir", dir, "node"]);
    assert.equal(second.code, 1);
    assert.match(second.stderr, new RegExp(`another wats daemon \\(pid ${started.pid}\\)`));
    assert.doesNotMatch(second.stderr, /took over/);
    assert.ok(alive(started.pid));
    assert.ok(!first.stdoutLines.some((l) => l.includes('"event":"stopped"')));
    const status = await runWats(["--data-dir", dir, "status"], { home: first.home });
    assert.equal(status.code, 0, status.stderr);
  } finally {
    const end = await first.stop();
    assert.equal(end.code, 0, end.stderr);
  }
});

Deno.test("a node `wats mcp` started stops on its own once no MCP session is open for its idle time", async () => {
  const dir = tempDataDir();
  // 10 minutes in real use; short here.
  const node = startWats(["--data-dir", dir, "node", "--started-by-mcp", "--mcp-idle", "1s"]);
  await node.waitForLine((l) => l.includes('"event":"started"'));
  const stopped = JSON.parse(await node.waitForLine((l) => l.includes('"event":"stopped"')));
  assert.equal(stopped.reason, "idle");
  const end = await node.stop();
  assert.equal(end.code, 0, end.stderr);
  assert.match(end.stderr, /stopping: no MCP session for 1s/);
  assert.equal(await exists(`${dir}/daemon.lock`), false, "lock released");
  assert.equal(await exists(`${dir}/mcp.sock`), false, "socket removed");
});

Deno.test("an open MCP session keeps a node `wats mcp` started running past its idle time", async () => {
  const dir = tempDataDir();
  // Long enough that a loaded machine still says hello before it runs out.
  const node = startWats(["--data-dir", dir, "node", "--started-by-mcp", "--mcp-idle", "5s"]);
  try {
    await node.waitForLine((l) => l.includes('"event":"started"'));
    const conn = await Deno.connect({ transport: "unix", path: `${dir}/mcp.sock` });
    await conn.write(new TextEncoder().encode('{"wats":"hello","profile":"alice"}\n'));
    const buf = new Uint8Array(256);
    const n = await conn.read(buf);
    assert.match(new TextDecoder().decode(buf.subarray(0, n ?? 0)), /"wats":"ready"/);
    // Past the idle time with the session open: still running.
    await new Promise((r) => setTimeout(r, 7_000));
    assert.ok(!node.stdoutLines.some((l) => l.includes('"event":"stopped"')), node.stderr());
    conn.close();
    const stopped = JSON.parse(await node.waitForLine((l) => l.includes('"event":"stopped"')));
    assert.equal(stopped.reason, "idle");
  } finally {
    const end = await node.stop();
    assert.equal(end.code, 0, end.stderr);
  }
});

Deno.test("--mcp-idle is only for a node `wats mcp` started", async () => {
  const r = await runWats(["--data-dir", tempDataDir(), "--mcp-idle", "1s"]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /--mcp-idle is only for a node started by `wats mcp`/);
});

Deno.test("with agent.codex_env_key naming a variable that is not set, the daemon refuses to start and says what to set", async () => {
  const dir = tempDataDir();
  await Deno.writeTextFile(
    `${dir}/config.toml`,
    '[agent]\nruntime = "codex"\ncodex_base_url = "http://127.0.0.1:9/v1"\n' +
      'codex_env_key = "WATS_TEST_CODEX_KEY"\n',
  );
  const r = await runWats(["--data-dir", dir]);
  assert.equal(r.stdout, "");
  assert.equal(
    r.stderr,
    "error: agent.codex_env_key names WATS_TEST_CODEX_KEY, which is not set: set it where wats " +
      `starts (export WATS_TEST_CODEX_KEY=…; for wats service, a WATS_TEST_CODEX_KEY=… line in ${dir}/service.env), ` +
      "or unset agent.codex_env_key\n",
  );
  assert.equal(r.code, 1);
  // Set, the start goes past that check (here to Codex itself, which this PATH lacks).
  const set = await runWats(["--data-dir", dir], {
    env: { WATS_TEST_CODEX_KEY: "sk-test", PATH: "/nonexistent" },
  });
  assert.equal(set.code, 1);
  assert.doesNotMatch(set.stderr, /codex_env_key/);
  assert.match(set.stderr, /^error: agent\.runtime = "codex" is refused: /m);
});

Deno.test("a harness whose agent nobody declared starts with a notice saying how to declare it; an unknown agent name stops the start", async () => {
  const dir = tempDataDir();
  // The old name match took this for Claude and gave its sandbox Claude's login and hosts.
  await Deno.writeTextFile(
    `${dir}/config.toml`,
    '[harnesses.helper]\ncommand = "my-claude-wrapper"\n',
  );
  const node = startWats(["--data-dir", dir, "node"]);
  try {
    await node.waitForLine((l) => l.includes('"event":"started"'));
    const banner = node.stderr();
    assert.match(banner, /\[harnesses\.helper\] runs "my-claude-wrapper", which declares no agent/);
    assert.match(banner, /add agent = "claude" or agent = "codex" to \[harnesses\.helper\]/);
  } finally {
    await node.stop();
  }
  await Deno.writeTextFile(
    `${dir}/config.toml`,
    '[harnesses.helper]\ncommand = "my-claude-wrapper"\nagent = "gemini"\n',
  );
  const bad = await runWats(["--data-dir", dir]);
  assert.equal(bad.code, 1);
  assert.match(
    bad.stderr,
    /^error: \[harnesses\.helper\] agent = "gemini" is not an agent wats knows \(claude, codex\)/,
  );
});
