/**
 * Proves each command's permission set (docs/architecture.md §2) from both sides: what the
 * command needs works, and one step outside it is `NotCapable`.
 */

import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { VERIFY_WORKER_URL } from "../../src/net/verify_worker_url.ts";
import { dataPaths } from "../../src/config/paths.ts";
import {
  type CommandId,
  LAUNCHER_FLAGS,
  type PermissionInputs,
  permissionsFor,
} from "../../src/cli/permissions.ts";
import type { Probe } from "./probe_worker.ts";
import { commandInputs } from "../../src/cli/command_inputs.ts";
import type { CommandInit } from "../../src/cli/context.ts";

async function probe(id: CommandId, inputs: PermissionInputs, probes: Probe[]): Promise<string[]> {
  const worker = new Worker(new URL("./probe_worker.ts", import.meta.url), {
    type: "module",
    deno: { permissions: permissionsFor(id, inputs) },
  });
  try {
    return await new Promise<string[]>((resolve, reject) => {
      worker.onmessage = (e) => resolve(e.data);
      worker.onerror = (e) => {
        e.preventDefault();
        reject(new Error(e.message));
      };
      worker.postMessage(probes);
    });
  } finally {
    worker.terminate();
  }
}

/** A data dir with the files that exist on a used node, and a live socket. */
async function fixture() {
  const root = await Deno.makeTempDir({ prefix: "wats-perm-" });
  const paths = dataPaths(`${root}/data`);
  await Deno.mkdir(paths.runsDir, { recursive: true });
  for (const f of [paths.config, paths.safety, paths.store, `${paths.runsDir}/r1.jsonl`]) {
    await Deno.writeTextFile(f, "x\n");
  }
  const outside = `${root}/outside.txt`;
  await Deno.writeTextFile(outside, "x\n");
  const listener = Deno.listen({ transport: "unix", path: paths.socket });
  const accepting = (async () => {
    for await (const c of listener) c.close();
  })();
  const inputs: PermissionInputs = { paths, self: ["/bin/true"] };
  const close = async () => {
    listener.close();
    await accepting.catch(() => {});
    await Deno.remove(root, { recursive: true });
  };
  return { root, paths, outside, inputs, close };
}

/**
 * What running `gh` gives where it is granted / not granted: Deno looks a
 * program up on PATH before it checks the grant, so without gh installed both
 * are NotFound and only the other probes prove the set.
 */
const GH_INSTALLED = (() => {
  try {
    new Deno.Command("gh", { args: ["--version"], stdout: "null", stderr: "null" }).outputSync();
    return true;
  } catch {
    return false;
  }
})();
const GH_OK = GH_INSTALLED ? "ok" : "NotFound";
const GH_REFUSED = GH_INSTALLED ? "NotCapable" : "NotFound";

/** Runs `probes` under `id` and compares with the expected outcomes (ok / NotCapable). */
async function expect(id: CommandId, inputs: PermissionInputs, cases: Array<[Probe, string]>) {
  const got = await probe(id, inputs, cases.map(([p]) => p));
  assertEquals(
    cases.map(([p], i) => `${JSON.stringify(p)} → ${got[i]}`),
    cases.map(([p, want]) => `${JSON.stringify(p)} → ${want}`),
  );
}

Deno.test("`wats agent runs/logs` can read transcripts but cannot write, spawn or connect", async () => {
  const f = await fixture();
  try {
    await expect("agent-read", f.inputs, [
      [{ op: "read", path: `${f.paths.runsDir}/r1.jsonl` }, "ok"],
      [{ op: "write", path: `${f.paths.runsDir}/r1.jsonl` }, "NotCapable"],
      [{ op: "write", path: `${f.paths.agentDir}/new.json` }, "NotCapable"],
      [{ op: "read", path: f.paths.config }, "NotCapable"],
      [{ op: "run", cmd: "git" }, "NotCapable"],
      [{ op: "connect", path: f.paths.socket }, "NotCapable"],
      [{ op: "env", name: "HOME" }, "NotCapable"],
    ]);
  } finally {
    await f.close();
  }
});

Deno.test("`wats agent approve/reject` only talks to the daemon: no file writes, no spawn", async () => {
  const f = await fixture();
  try {
    await expect("agent-decide", f.inputs, [
      [{ op: "connect", path: f.paths.socket }, "ok"],
      [{ op: "write", path: `${f.paths.pendingDir}.json` }, "NotCapable"],
      [{ op: "write", path: f.paths.safety }, "NotCapable"],
      [{ op: "run", cmd: "git" }, "NotCapable"],
    ]);
  } finally {
    await f.close();
  }
});

Deno.test("`wats agent approve --edit` may run the editor and write its one temp file", async () => {
  const f = await fixture();
  try {
    const inputs = { ...f.inputs, editor: "/bin/true", editFile: `${f.root}/draft.md` };
    await expect("agent-edit", inputs, [
      [{ op: "write", path: `${f.root}/draft.md` }, "ok"],
      [{ op: "run", cmd: "/bin/true" }, "ok"],
      [{ op: "connect", path: f.paths.socket }, "ok"],
      [{ op: "write", path: `${f.root}/other.md` }, "NotCapable"],
      [{ op: "write", path: f.paths.config }, "NotCapable"],
      [{ op: "run", cmd: "git" }, "NotCapable"],
    ]);
  } finally {
    await f.close();
  }
});

Deno.test("`wats config get/list` reads config.toml and safety.json and writes nothing", async () => {
  const f = await fixture();
  try {
    await expect("config-read", f.inputs, [
      [{ op: "read", path: f.paths.config }, "ok"],
      [{ op: "read", path: f.paths.safety }, "ok"],
      [{ op: "read", path: f.paths.store }, "NotCapable"],
      [{ op: "write", path: f.paths.config }, "NotCapable"],
    ]);
  } finally {
    await f.close();
  }
});

Deno.test("`wats config set/unset` can write config.toml and nothing else", async () => {
  const f = await fixture();
  try {
    await expect("config-write", f.inputs, [
      [{ op: "write", path: f.paths.config }, "ok"],
      [{ op: "write", path: f.paths.safety }, "NotCapable"],
      [{ op: "write", path: `${f.paths.config}.tmp` }, "NotCapable"],
      [{ op: "write", path: f.paths.store }, "NotCapable"],
      [{ op: "run", cmd: "git" }, "NotCapable"],
      [{ op: "connect", path: f.paths.socket }, "NotCapable"],
    ]);
  } finally {
    await f.close();
  }
});

Deno.test("only the safety writers (config ack, first-start init) can write safety.json", async () => {
  const f = await fixture();
  try {
    const all: CommandId[] = [
      "help",
      "daemon",
      "mcp",
      "agent-read",
      "agent-decide",
      "agent-edit",
      "config-read",
      "config-write",
      "config-ack",
      "safety-init",
      "setup",
      "status",
      "ui",
      "control",
      "try",
      "ask",
      "thread",
    ];
    for (const id of all) {
      const [got] = await probe(id, f.inputs, [{ op: "write", path: f.paths.safety }]);
      const writer = id === "config-ack" || id === "safety-init";
      assertEquals(`${id}: ${got}`, `${id}: ${writer ? "ok" : "NotCapable"}`);
    }
    await expect("config-ack", f.inputs, [
      [{ op: "write", path: f.paths.config }, "NotCapable"],
      [{ op: "run", cmd: "git" }, "NotCapable"],
    ]);
  } finally {
    await f.close();
  }
});

Deno.test("the daemon writes its store, key, agent dir and socket, never config.toml or safety.json", async () => {
  const f = await fixture();
  try {
    await Deno.remove(f.paths.socket).catch(() => {});
    const inputs = { ...f.inputs, harnesses: ["claude"], relays: ["127.0.0.1:9"] };
    await expect("daemon", inputs, [
      [{ op: "write", path: f.paths.store }, "ok"],
      [{ op: "write", path: f.paths.nodeKey }, "ok"],
      [{ op: "write", path: f.paths.lock }, "ok"],
      [{ op: "mkdir", path: `${f.paths.runsDir}/deep` }, "ok"],
      [{ op: "write", path: f.paths.config }, "NotCapable"],
      [{ op: "write", path: f.paths.safety }, "NotCapable"],
      [{ op: "write", path: `${f.paths.dataDir}/other.txt` }, "NotCapable"],
      [{ op: "write", path: f.outside }, "NotCapable"],
      [{ op: "read", path: f.outside }, "NotCapable"],
      [{ op: "run", cmd: "kill" }, "ok"],
      [{ op: "run", cmd: "ps" }, "ok"],
      // gh opens pull requests of coding agents' works: none without a checkout.
      [{ op: "run", cmd: "gh" }, GH_REFUSED],
      [{ op: "read", path: "/proc/self/stat" }, "NotCapable"],
      // The verify workers' module, to start them; not the code beside it.
      [{ op: "read", path: fileURLToPath(VERIFY_WORKER_URL) }, "ok"],
      [
        { op: "read", path: fileURLToPath(new URL("help_worker.ts", VERIFY_WORKER_URL)) },
        "NotCapable",
      ],
      [{ op: "run", cmd: "sh" }, "NotCapable"],
      [{ op: "tcp", hostname: "127.0.0.1", port: 10 }, "NotCapable"],
      [{ op: "env", name: "HOME" }, "NotCapable"],
    ]);
    // Allowed, though nothing listens: the grant passes and the connect fails.
    const [relay] = await probe("daemon", inputs, [{ op: "tcp", hostname: "127.0.0.1", port: 9 }]);
    assertEquals(relay === "NotCapable", false);
  } finally {
    await f.close();
  }
});

/** The daemon's permission inputs as the launcher computes them from the fixture's config.toml. */
function daemonInputs(
  f: { paths: CommandInit["paths"]; root: string },
  launcherEnv: Record<string, string> = Deno.env.toObject(),
) {
  return commandInputs("daemon", {
    argv: [],
    words: [],
    paths: f.paths,
    env: {},
    cwd: f.root,
    os: "linux",
    user: "alice",
    self: ["/bin/true"],
    stdinIsTerminal: false,
    stdoutIsTerminal: false,
    verbose: false,
  }, launcherEnv);
}

Deno.test("with agent.runtime = acp, the daemon also runs agent.harness's command (even a harness with no tool), nothing more", async () => {
  const f = await fixture();
  try {
    await Deno.remove(f.paths.socket).catch(() => {});
    await Deno.writeTextFile(
      f.paths.config,
      `[harnesses.heart]\ncommand = "python3"\nenabled = false\n\n` +
        `[harnesses.other]\ncommand = "perl"\nenabled = false\n\n` +
        `[agent]\nruntime = "acp"\nharness = "heart"\n`,
    );
    const inputs = await daemonInputs(f);
    assertEquals(inputs.harnesses, ["python3"]);
    await expect("daemon", inputs, [
      [{ op: "run", cmd: "python3" }, "ok"],
      [{ op: "run", cmd: "perl" }, "NotCapable"],
      [{ op: "run", cmd: "node" }, "NotCapable"],
      [{ op: "run", cmd: "sh" }, "NotCapable"],
    ]);
  } finally {
    await f.close();
  }
});

Deno.test("with coding agents, the daemon also runs their commands and reads the checkouts, nothing more", async () => {
  const f = await fixture();
  try {
    await Deno.remove(f.paths.socket).catch(() => {});
    const checkout = `${f.root}/repo`;
    await Deno.mkdir(checkout);
    await Deno.writeTextFile(`${checkout}/README.md`, "x\n");
    await Deno.writeTextFile(
      f.paths.config,
      `[harnesses.claude]\ncommand = "node"\nargs = ["agent.js"]\n\n` +
        `[harnesses.off]\ncommand = "python3"\nenabled = false\n\n` +
        `[checkouts.app]\npath = "${checkout}"\n`,
    );
    const inputs = await daemonInputs(f);
    assertEquals(inputs.harnesses, ["node"]);
    assertEquals(inputs.checkouts, [checkout]);
    // The coding agents run in the OS sandbox (sandbox.mode = required by default).
    assertEquals(inputs.sandbox, "bwrap");
    await expect("daemon", inputs, [
      [{ op: "run", cmd: "node" }, "ok"],
      [{ op: "run", cmd: "bwrap" }, "ok"],
      [{ op: "run", cmd: "git" }, "ok"],
      [{ op: "run", cmd: "gh" }, GH_OK],
      [{ op: "run", cmd: "python3" }, "NotCapable"],
      [{ op: "run", cmd: "sh" }, "NotCapable"],
      [{ op: "read", path: `${checkout}/README.md` }, "ok"],
      [{ op: "write", path: `${checkout}/README.md` }, "NotCapable"],
      [{ op: "read", path: f.outside }, "NotCapable"],
      [{ op: "mkdir", path: `${f.paths.worktrees}/claude/app/a/_/w` }, "ok"],
      [{ op: "write", path: f.paths.config }, "NotCapable"],
      [{ op: "write", path: f.paths.safety }, "NotCapable"],
    ]);
  } finally {
    await f.close();
  }
});

Deno.test("with [notify.NAME] targets, the daemon connects to their hosts and reads their variables, nothing more", async () => {
  const f = await fixture();
  try {
    await Deno.remove(f.paths.socket).catch(() => {});
    await Deno.writeTextFile(
      f.paths.config,
      `[notify.hook]\ntype = "webhook"\nurl = "http://127.0.0.1:9/hook"\nsecret_env = "HOOK_SECRET"\n\n` +
        `[notify.phone]\ntype = "ntfy"\nurl = "https://127.0.0.2/alice"\ntoken_env = "NTFY_TOKEN"\n\n` +
        `[notify.team]\ntype = "slack"\nurl_env = "SLACK_URL"\n\n` +
        `[notify.unset]\ntype = "slack"\nurl_env = "UNSET_URL"\n`,
    );
    // The launcher reads a url_env's value from its own environment; an unset one grants nothing.
    const inputs = await daemonInputs(f, { SLACK_URL: "http://127.0.0.4:8080/services/x" });
    assertEquals(inputs.notifyHosts, ["127.0.0.1:9", "127.0.0.2:443", "127.0.0.4:8080"]);
    assertEquals(inputs.notifyEnv, ["HOOK_SECRET", "NTFY_TOKEN", "SLACK_URL", "UNSET_URL"]);
    await expect("daemon", inputs, [
      [{ op: "env", name: "HOOK_SECRET" }, "ok"],
      [{ op: "env", name: "NTFY_TOKEN" }, "ok"],
      [{ op: "env", name: "SLACK_URL" }, "ok"],
      [{ op: "env", name: "HOME" }, "NotCapable"],
      [{ op: "env", name: "HOOK_SECRET2" }, "NotCapable"],
      [{ op: "tcp", hostname: "127.0.0.1", port: 10 }, "NotCapable"],
      [{ op: "tcp", hostname: "127.0.0.2", port: 80 }, "NotCapable"],
      [{ op: "tcp", hostname: "127.0.0.3", port: 443 }, "NotCapable"],
      [{ op: "tcp", hostname: "127.0.0.4", port: 80 }, "NotCapable"],
    ]);
    // Allowed, though nothing listens: the grant passes and the connect fails.
    const got = await probe("daemon", inputs, [
      { op: "tcp", hostname: "127.0.0.1", port: 9 },
      { op: "tcp", hostname: "127.0.0.2", port: 443 },
    ]);
    assertEquals(got.map((g) => g === "NotCapable"), [false, false]);
  } finally {
    await f.close();
  }
});

Deno.test("the daemon runs the sandbox program only with an agent runtime or a coding agent, and not with sandbox.mode = off", async () => {
  const f = await fixture();
  try {
    await Deno.remove(f.paths.socket).catch(() => {});
    // Which runs are sandboxed is the runtime's to say (`Runtime.shellless`), known once it is
    // made: any agent runtime may start bwrap.
    const cases: [string, string | undefined][] = [
      ['[agent]\nruntime = "none"\n', undefined],
      ['[agent]\nruntime = "claude"\n', "bwrap"],
      ['[agent]\nruntime = "claude"\naccess = "workspace"\n', "bwrap"],
      ['[agent]\nruntime = "codex"\naccess = "inherit"\n', "bwrap"],
      ['[agent]\nruntime = "claude"\naccess = "workspace"\n[sandbox]\nmode = "off"\n', undefined],
      ['[harnesses.claude]\ncommand = "node"\n[sandbox]\nmode = "off"\n', undefined],
    ];
    for (const [config, sandbox] of cases) {
      await Deno.writeTextFile(f.paths.config, config);
      assertEquals((await daemonInputs(f)).sandbox, sandbox, config);
    }
    const inputs = await daemonInputs(f);
    await expect("daemon", inputs, [[{ op: "run", cmd: "bwrap" }, "NotCapable"]]);
  } finally {
    await f.close();
  }
});

Deno.test("a Codex daemon may listen on an ephemeral loopback port for its self-check, nothing more", async () => {
  const f = await fixture();
  try {
    await Deno.remove(f.paths.socket).catch(() => {});
    // A port something listens on, to prove the grant does not reach it.
    const other = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const port = (other.addr as Deno.NetAddr).port;
    try {
      const codex = { ...f.inputs, harnesses: ["codex"], loopbackServer: true };
      await expect("daemon", codex, [
        [{ op: "tcp-listen", hostname: "127.0.0.1", port: 0 }, "ok"],
        [{ op: "tcp-listen", hostname: "127.0.0.1", port: 18123 }, "NotCapable"],
        [{ op: "tcp-listen", hostname: "0.0.0.0", port: 0 }, "NotCapable"],
        [{ op: "tcp", hostname: "127.0.0.1", port }, "NotCapable"],
      ]);
      await expect("daemon", { ...f.inputs, harnesses: ["claude"] }, [
        [{ op: "tcp-listen", hostname: "127.0.0.1", port: 0 }, "NotCapable"],
      ]);
    } finally {
      other.close();
    }
  } finally {
    await f.close();
  }
});

Deno.test("`wats mcp` connects to the socket and may start its own program and kill, nothing else", async () => {
  const f = await fixture();
  try {
    await expect("mcp", f.inputs, [
      [{ op: "connect", path: f.paths.socket }, "ok"],
      [{ op: "run", cmd: "/bin/true" }, "ok"],
      [{ op: "run", cmd: "kill" }, "ok"],
      [{ op: "run", cmd: "ps" }, "NotCapable"],
      [{ op: "run", cmd: "git" }, "NotCapable"],
      [{ op: "write", path: f.paths.config }, "NotCapable"],
      [{ op: "write", path: `${f.paths.agentDir}/x` }, "NotCapable"],
      [{ op: "read", path: f.outside }, "NotCapable"],
    ]);
  } finally {
    await f.close();
  }
});

Deno.test("`wats status` reads and connects, and writes nothing", async () => {
  const f = await fixture();
  try {
    await expect("status", f.inputs, [
      [{ op: "connect", path: f.paths.socket }, "ok"],
      [{ op: "read", path: f.paths.config }, "ok"],
      [{ op: "write", path: f.paths.config }, "NotCapable"],
      [{ op: "run", cmd: "git" }, "NotCapable"],
    ]);
  } finally {
    await f.close();
  }
});

Deno.test("`wats ui` reads, connects and serves its one address, and writes only config.toml (a confirmed allow rule)", async () => {
  const f = await fixture();
  try {
    const assets = `${f.root}/assets`;
    await Deno.mkdir(assets);
    await Deno.writeTextFile(`${assets}/style.css`, "x\n");
    const inputs = { ...f.inputs, listen: "127.0.0.1:47448", uiAssets: assets };
    await expect("ui", inputs, [
      [{ op: "connect", path: f.paths.socket }, "ok"],
      [{ op: "read", path: `${f.paths.runsDir}/r1.jsonl` }, "ok"],
      [{ op: "read", path: f.paths.config }, "ok"],
      [{ op: "read", path: `${assets}/style.css` }, "ok"],
      [{ op: "write", path: `${assets}/style.css` }, "NotCapable"],
      [{ op: "tcp-listen", hostname: "127.0.0.1", port: 47448 }, "ok"],
      [{ op: "tcp-listen", hostname: "127.0.0.1", port: 47449 }, "NotCapable"],
      [{ op: "tcp-listen", hostname: "0.0.0.0", port: 47448 }, "NotCapable"],
      [{ op: "tcp", hostname: "127.0.0.1", port: 47447 }, "NotCapable"],
      [{ op: "write", path: f.paths.config }, "ok"],
      [{ op: "write", path: f.paths.safety }, "NotCapable"],
      [{ op: "write", path: f.paths.store }, "NotCapable"],
      [{ op: "write", path: `${f.paths.runsDir}/r1.jsonl` }, "NotCapable"],
      [{ op: "write", path: `${f.paths.dataDir}/ui.token` }, "NotCapable"],
      [{ op: "read", path: f.outside }, "NotCapable"],
      [{ op: "run", cmd: "xdg-open" }, "NotCapable"],
      [{ op: "env", name: "HOME" }, "NotCapable"],
    ]);
  } finally {
    await f.close();
  }
});

Deno.test("`wats try` connects to this node, uses its scratch dir and runs itself, nothing else", async () => {
  const f = await fixture();
  try {
    const scratch = `${f.root}/wats-try-1`;
    await Deno.mkdir(scratch);
    const other = Deno.listen({ transport: "unix", path: `${scratch}/mcp.sock` });
    try {
      await expect("try", { ...f.inputs, scratch }, [
        [{ op: "connect", path: f.paths.socket }, "ok"],
        [{ op: "connect", path: `${scratch}/mcp.sock` }, "ok"],
        [{ op: "write", path: `${scratch}/x` }, "ok"],
        [{ op: "run", cmd: "/bin/true" }, "ok"],
        [{ op: "run", cmd: "kill" }, "NotCapable"],
        [{ op: "read", path: f.paths.config }, "NotCapable"],
        [{ op: "write", path: `${f.root}/wats-try-2` }, "NotCapable"],
        [{ op: "write", path: f.paths.store }, "NotCapable"],
        [{ op: "tcp", hostname: "127.0.0.1", port: 7447 }, "NotCapable"],
      ]);
    } finally {
      other.close();
    }
  } finally {
    await f.close();
  }
});

Deno.test("`wats resume` and `wats guardian halt` only send one line to the daemon", async () => {
  const f = await fixture();
  try {
    await expect("control", f.inputs, [
      [{ op: "connect", path: f.paths.socket }, "ok"],
      [{ op: "read", path: f.paths.config }, "NotCapable"],
      [{ op: "write", path: f.paths.config }, "NotCapable"],
      [{ op: "write", path: f.paths.store }, "NotCapable"],
      [{ op: "run", cmd: "git" }, "NotCapable"],
    ]);
  } finally {
    await f.close();
  }
});

Deno.test("`wats work` only talks to the daemon, which does the work", async () => {
  const f = await fixture();
  try {
    await expect("work", f.inputs, [
      [{ op: "connect", path: f.paths.socket }, "ok"],
      [{ op: "read", path: f.paths.worktrees }, "NotCapable"],
      [{ op: "read", path: f.paths.config }, "NotCapable"],
      [{ op: "write", path: f.paths.store }, "NotCapable"],
      [{ op: "run", cmd: "git" }, "NotCapable"],
      [{ op: "run", cmd: "gh" }, GH_REFUSED],
    ]);
  } finally {
    await f.close();
  }
});

for (const id of ["ask", "thread"] as const) {
  Deno.test(`\`wats ${id}\` only talks to the daemon over mcp.sock: no store, no key, no relay`, async () => {
    const f = await fixture();
    try {
      await expect(id, f.inputs, [
        [{ op: "connect", path: f.paths.socket }, "ok"],
        [{ op: "read", path: f.paths.store }, "NotCapable"],
        [{ op: "read", path: f.paths.nodeKey }, "NotCapable"],
        [{ op: "read", path: f.paths.config }, "NotCapable"],
        [{ op: "write", path: f.paths.store }, "NotCapable"],
        [{ op: "tcp", hostname: "127.0.0.1", port: 7777 }, "NotCapable"],
        [{ op: "run", cmd: "/bin/true" }, "NotCapable"],
        [{ op: "env", name: "HOME" }, "NotCapable"],
      ]);
    } finally {
      await f.close();
    }
  });
}

Deno.test("help holds no permission at all", async () => {
  const f = await fixture();
  try {
    await expect("help", f.inputs, [
      [{ op: "read", path: f.paths.config }, "NotCapable"],
      [{ op: "write", path: f.outside }, "NotCapable"],
      [{ op: "run", cmd: "/bin/true" }, "NotCapable"],
    ]);
  } finally {
    await f.close();
  }
});

Deno.test("`wats setup` may run claude (to register wats) and codex (to check it is installed), nothing else", async () => {
  const f = await fixture();
  try {
    // Granted is "ok", or "NotFound" where that CLI is not installed: either way not NotCapable.
    const got = await probe("setup", f.inputs, [
      { op: "run", cmd: "claude" },
      { op: "run", cmd: "codex" },
    ]);
    assertEquals(got.map((g) => g === "NotCapable"), [false, false], got.join(", "));
    await expect("setup", f.inputs, [
      [{ op: "run", cmd: "git" }, "NotCapable"],
      [{ op: "run", cmd: "/bin/true" }, "NotCapable"],
      // `--http` makes a token as `wats mcp token create` does, under the same lock.
      [{ op: "write", path: `${f.paths.mcpTokens}.lock` }, "ok"],
      [{ op: "write", path: f.paths.store }, "NotCapable"],
    ]);
  } finally {
    await f.close();
  }
});

/** `wats service`'s grant for a fixture: a unit folder beside the data dir. */
function serviceInputs(
  f: Awaited<ReturnType<typeof fixture>>,
  opts: { dirExists: boolean; launchd?: boolean },
): PermissionInputs {
  const dir = `${f.root}/units`;
  if (opts.dirExists) Deno.mkdirSync(dir);
  const file = `${dir}/wats.service`;
  return {
    ...f.inputs,
    service: {
      file,
      writable: opts.dirExists ? file : dir,
      enableLink: `${dir}/default.target.wants/wats.service`,
      log: opts.launchd ? `${f.paths.dataDir}/wats.log` : undefined,
      envFile: opts.launchd ? `${f.paths.dataDir}/service.env` : undefined,
      manager: "systemctl",
      needsUid: opts.launchd ?? false,
    },
  };
}

Deno.test("`wats service install` writes its one unit file and runs nothing", async () => {
  const f = await fixture();
  try {
    const inputs = serviceInputs(f, { dirExists: true });
    const unit = inputs.service!.file;
    await expect("service-install", inputs, [
      [{ op: "write", path: unit }, "ok"],
      [{ op: "read", path: unit }, "ok"],
      [{ op: "write", path: `${f.root}/units/other.service` }, "NotCapable"],
      [{ op: "read", path: f.paths.config }, "NotCapable"],
      [{ op: "read", path: f.paths.nodeKey }, "NotCapable"],
      [{ op: "run", cmd: "systemctl" }, "NotCapable"],
      [{ op: "connect", path: f.paths.socket }, "NotCapable"],
      [{ op: "uid" }, "NotCapable"],
    ]);
  } finally {
    await f.close();
  }
});

Deno.test("`wats service install` may create the unit folder only when it does not exist", async () => {
  const f = await fixture();
  try {
    const inputs = serviceInputs(f, { dirExists: false });
    await expect("service-install", inputs, [
      [{ op: "mkdir", path: `${f.root}/units` }, "ok"],
      [{ op: "write", path: inputs.service!.file }, "ok"],
      [{ op: "mkdir", path: `${f.root}/elsewhere` }, "NotCapable"],
    ]);
  } finally {
    await f.close();
  }
});

Deno.test("`wats service install` on macOS also creates its log file in the data dir and reads service.env, nothing else there", async () => {
  const f = await fixture();
  try {
    const inputs = serviceInputs(f, { dirExists: true, launchd: true });
    await Deno.writeTextFile(`${f.paths.dataDir}/service.env`, "K=v\n");
    await expect("service-install", inputs, [
      [{ op: "write", path: `${f.paths.dataDir}/wats.log` }, "ok"],
      [{ op: "read", path: `${f.paths.dataDir}/service.env` }, "ok"],
      [{ op: "write", path: `${f.paths.dataDir}/service.env` }, "NotCapable"],
      [{ op: "write", path: f.paths.config }, "NotCapable"],
      [{ op: "write", path: f.paths.store }, "NotCapable"],
    ]);
  } finally {
    await f.close();
  }
});

Deno.test("`wats service uninstall` may run the manager and remove its unit and link, nothing else", async () => {
  const f = await fixture();
  try {
    const inputs = serviceInputs(f, { dirExists: true });
    await expect("service-uninstall", inputs, [
      [{ op: "run", cmd: "systemctl" }, "ok"],
      [{ op: "write", path: inputs.service!.file }, "ok"],
      [{ op: "mkdir", path: inputs.service!.enableLink! }, "ok"],
      [{ op: "write", path: `${f.root}/units/other.service` }, "NotCapable"],
      [{ op: "run", cmd: "git" }, "NotCapable"],
      [{ op: "read", path: f.paths.config }, "NotCapable"],
      [{ op: "uid" }, "NotCapable"],
    ]);
  } finally {
    await f.close();
  }
});

Deno.test("`wats service status` reads its unit and asks the manager; on macOS it may know the uid", async () => {
  const f = await fixture();
  try {
    const inputs = serviceInputs(f, { dirExists: true });
    await Deno.writeTextFile(inputs.service!.file, "x\n");
    await expect("service-status", inputs, [
      [{ op: "read", path: inputs.service!.file }, "ok"],
      [{ op: "run", cmd: "systemctl" }, "ok"],
      [{ op: "write", path: inputs.service!.file }, "NotCapable"],
      [{ op: "read", path: f.paths.dataDir }, "NotCapable"],
      [{ op: "run", cmd: "git" }, "NotCapable"],
      [{ op: "uid" }, "NotCapable"],
    ]);
    await Deno.writeTextFile(`${f.paths.dataDir}/service.env`, "K=v\n");
    await expect("service-status", serviceInputs(f, { dirExists: false, launchd: true }), [
      [{ op: "uid" }, "ok"],
      [{ op: "read", path: `${f.paths.dataDir}/service.env` }, "ok"],
      [{ op: "env", name: "HOME" }, "NotCapable"],
    ]);
  } finally {
    await f.close();
  }
});

Deno.test("deno.json's wats and compile tasks carry exactly the launcher's flags", async () => {
  const cfg = JSON.parse(await Deno.readTextFile(new URL("../../deno.json", import.meta.url)));
  assert(LAUNCHER_FLAGS.includes("--no-prompt"), "a permission prompt would freeze wats");
  for (const task of ["wats", "compile"]) {
    const flags = (cfg.tasks[task] as string).split(/\s+/)
      .filter((w) => w.startsWith("--allow") || w.startsWith("--no-prompt"));
    assertEquals(flags, [...LAUNCHER_FLAGS], `task ${task}`);
  }
});

Deno.test("under sandbox.network = model-only the daemon listens on its model socket and connects to the model hosts, nothing more", async () => {
  const f = await fixture();
  try {
    await Deno.remove(f.paths.socket).catch(() => {});
    await Deno.writeTextFile(
      f.paths.config,
      `[harnesses.claude]\ncommand = "claude-agent-acp"\n` +
        `env = { ANTHROPIC_BASE_URL = "http://127.0.0.1:9" }\n`,
    );
    const inputs = await daemonInputs(f);
    const socket = `${f.paths.agentDir}/model.sock`;
    assertEquals(inputs.modelProxy, { socket, hosts: ["127.0.0.1:9"] });
    await Deno.mkdir(f.paths.agentDir, { recursive: true });
    await expect("daemon", inputs, [
      [{ op: "listen", path: socket }, "ok"],
      [{ op: "listen", path: `${f.paths.agentDir}/other.sock` }, "NotCapable"],
      [{ op: "tcp", hostname: "127.0.0.1", port: 10 }, "NotCapable"],
      [{ op: "tcp", hostname: "127.0.0.2", port: 9 }, "NotCapable"],
    ]);
    // Allowed, though nothing listens: the grant passes and the connect fails.
    const [model] = await probe("daemon", inputs, [{ op: "tcp", hostname: "127.0.0.1", port: 9 }]);
    assertEquals(model === "NotCapable", false);
    // Open: no model socket, no model host.
    await Deno.writeTextFile(f.paths.config, `[sandbox]\nnetwork = "open"\n`, { append: true });
    assertEquals((await daemonInputs(f)).modelProxy, undefined);
  } finally {
    await f.close();
  }
});

Deno.test("with mcp.listen the daemon also listens on that one address (MCP over HTTP), nothing more", async () => {
  const f = await fixture();
  try {
    await Deno.writeTextFile(f.paths.config, `[mcp]\nlisten = "127.0.0.1:47449"\n`);
    await Deno.writeTextFile(f.paths.mcpTokens, "{}\n");
    const inputs = await daemonInputs(f);
    assertEquals(inputs.mcpListen, "127.0.0.1:47449");
    await expect("daemon", inputs, [
      [{ op: "tcp-listen", hostname: "127.0.0.1", port: 47449 }, "ok"],
      [{ op: "tcp-listen", hostname: "127.0.0.1", port: 47450 }, "NotCapable"],
      [{ op: "tcp-listen", hostname: "0.0.0.0", port: 47449 }, "NotCapable"],
      [{ op: "tcp", hostname: "127.0.0.1", port: 10 }, "NotCapable"],
      // The token file is the person's: the daemon reads it, never writes it.
      [{ op: "read", path: f.paths.mcpTokens }, "ok"],
      [{ op: "write", path: f.paths.mcpTokens }, "NotCapable"],
      [{ op: "write", path: `${f.paths.mcpTokens}.lock` }, "NotCapable"],
    ]);
    // Off by default, and an address the daemon would refuse gets no grant either.
    await Deno.writeTextFile(f.paths.config, "");
    assertEquals((await daemonInputs(f)).mcpListen, undefined);
    await Deno.writeTextFile(f.paths.config, `[mcp]\nlisten = "192.0.2.7:47449"\n`);
    assertEquals((await daemonInputs(f)).mcpListen, undefined);
    await expect("daemon", await daemonInputs(f), [
      [{ op: "tcp-listen", hostname: "127.0.0.1", port: 47449 }, "NotCapable"],
    ]);
  } finally {
    await f.close();
  }
});

Deno.test("`wats mcp token` reads config.toml and writes only the token file, nothing else", async () => {
  const f = await fixture();
  try {
    await Deno.writeTextFile(f.paths.mcpTokens, "{}\n");
    await expect("mcp-token", f.inputs, [
      [{ op: "read", path: f.paths.config }, "ok"],
      [{ op: "read", path: f.paths.mcpTokens }, "ok"],
      [{ op: "write", path: f.paths.mcpTokens }, "ok"],
      [{ op: "write", path: `${f.paths.mcpTokens}.tmp` }, "ok"],
      // Writers take turns on a lock of this file (src/mcp/http_tokens.ts).
      [{ op: "write", path: `${f.paths.mcpTokens}.lock` }, "ok"],
      [{ op: "write", path: `${f.paths.dataDir}/mcp_tokens.json.other` }, "NotCapable"],
      [{ op: "write", path: f.paths.config }, "NotCapable"],
      [{ op: "write", path: f.paths.safety }, "NotCapable"],
      [{ op: "read", path: f.paths.safety }, "NotCapable"],
      [{ op: "read", path: f.paths.store }, "NotCapable"],
      [{ op: "connect", path: f.paths.socket }, "NotCapable"],
      [{ op: "tcp", hostname: "127.0.0.1", port: 7449 }, "NotCapable"],
      [{ op: "run", cmd: "git" }, "NotCapable"],
      [{ op: "env", name: "HOME" }, "NotCapable"],
    ]);
  } finally {
    await f.close();
  }
});
