import assert from "node:assert/strict";
import { route } from "../../src/cli/route.ts";

const r = (line: string) => {
  const x = route(line === "" ? [] : line.split(" "));
  return { id: x.id, worker: x.worker, words: x.words, argv: x.argv, dataDir: x.dataDir };
};

Deno.test("a bare wats, with or without daemon flags, is the daemon", () => {
  assert.deepEqual(r(""), {
    id: "daemon",
    worker: "daemon_worker.ts",
    words: [],
    argv: [],
    dataDir: undefined,
  });
  assert.equal(r("--agent claude --every 5m").id, "daemon");
  assert.deepEqual(r("--agent claude --every 5m").argv, ["--agent", "claude", "--every", "5m"]);
  assert.deepEqual(r("node --agent claude").words, ["node"]);
});

Deno.test("--data-dir is taken anywhere on the line, in both spellings", () => {
  assert.equal(r("--data-dir /d status").dataDir, "/d");
  assert.equal(r("config get profile --data-dir=/e").dataDir, "/e");
  assert.deepEqual(r("config get profile --data-dir=/e").argv, ["profile"]);
});

Deno.test("each subcommand gets its own permission set", () => {
  assert.equal(r("config get profile").id, "config-read");
  assert.equal(r("config set profile x").id, "config-write");
  assert.equal(r("config ack").id, "config-ack");
  assert.equal(r("agent runs").id, "agent-read");
  assert.equal(r("agent approve abc").id, "agent-decide");
  assert.equal(r("agent approve abc --edit").id, "agent-edit");
  assert.equal(r("guardian list").id, "config-read");
  assert.equal(r("guardian add k").id, "config-write");
  assert.equal(r("guardian halt").id, "control");
  assert.equal(r("guardian halt").worker, "guardian_worker.ts");
  assert.equal(r("resume").id, "control");
  // `wats agent sweep` only sends a control line: the daemon sweeps.
  assert.equal(r("agent sweep").id, "control");
  assert.equal(r("agent sweep").worker, "guardian_worker.ts");
  assert.deepEqual(r("agent sweep").words, ["agent", "sweep"]);
  // `wats work …` sends control requests only: the daemon runs git and the calls.
  assert.deepEqual(r("work send w1 --text fix"), {
    id: "work",
    worker: "work_worker.ts",
    words: ["work", "send"],
    argv: ["w1", "--text", "fix"],
    dataDir: undefined,
  });
  assert.equal(r("work list").id, "work");
  assert.equal(r("work frob").id, "help");
  assert.equal(r("mcp --profile p").id, "mcp");
  assert.deepEqual(r("try --text hi --timeout 90s"), {
    id: "try",
    worker: "try_worker.ts",
    words: ["try"],
    argv: ["--text", "hi", "--timeout", "90s"],
    dataDir: undefined,
  });
  // `wats ask`/`wats thread`: an MCP session with the daemon, each its own Worker and set.
  assert.deepEqual(r("ask Logs --text hi --to npub1x --caps a,b"), {
    id: "ask",
    worker: "ask_worker.ts",
    words: ["ask"],
    argv: ["Logs", "--text", "hi", "--to", "npub1x", "--caps", "a,b"],
    dataDir: undefined,
  });
  assert.deepEqual(r("thread abc --limit 5"), {
    id: "thread",
    worker: "thread_worker.ts",
    words: ["thread"],
    argv: ["abc", "--limit", "5"],
    dataDir: undefined,
  });
  assert.deepEqual(r("ui --listen 127.0.0.1:9000"), {
    id: "ui",
    worker: "ui_worker.ts",
    words: ["ui"],
    argv: ["--listen", "127.0.0.1:9000"],
    dataDir: undefined,
  });
});

Deno.test("help, versions and unknown words go to the help worker, which holds no permission", () => {
  assert.equal(r("--help").id, "help");
  assert.equal(r("--version").id, "help");
  assert.equal(r("frob").id, "help");
  assert.equal(r("config").id, "help");
  assert.equal(r("config frob").id, "help");
});

Deno.test("a value of a flag the router does not know goes to the daemon, which names the flag", () => {
  assert.equal(r("--evry 5m").id, "daemon");
});
