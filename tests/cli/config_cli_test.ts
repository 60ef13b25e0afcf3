import assert from "node:assert/strict";
import { dataPaths } from "../../src/config/paths.ts";
import { permissionsFor } from "../../src/cli/permissions.ts";
import type { AttemptRequest, AttemptResult } from "../config/acknowledge_worker.ts";
import { watsCommand } from "../support/cli.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `wats --data-dir DIR ARGS…` from source as a subprocess, with the
 * launcher's flags and a clean environment plus `env`.
 */
async function wats(dir: string, args: string[], env: Record<string, string> = {}): Promise<Run> {
  const base: Record<string, string> = {};
  for (const k of ["HOME", "PATH", "DENO_DIR", "TMPDIR"]) {
    const v = Deno.env.get(k);
    if (v !== undefined) base[k] = v;
  }
  // The launcher's own flags (--no-prompt among them), as `deno task wats` runs it.
  const [program, ...launcher] = watsCommand();
  assert.ok(program, "watsCommand() names a program");
  const out = await new Deno.Command(program, {
    args: [...launcher, "--data-dir", dir, ...args],
    cwd: ROOT,
    clearEnv: true,
    env: { ...base, USER: "tester", ...env },
    stdin: "null",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

async function withDataDir(fn: (dir: string) => Promise<void>) {
  const dir = await Deno.makeTempDir({ prefix: "wats-config-cli-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("config set then get: the value round-trips through config.toml", async () => {
  await withDataDir(async (dir) => {
    const set = await wats(dir, ["config", "set", "agent.every", "90s"]);
    assert.equal(set.stderr, "");
    assert.equal(set.code, 0);
    assert.match(
      set.stdout,
      /^set agent\.every = 1m30s in .*config\.toml \(was 30s, the default\)\n/,
    );
    assert.match(set.stdout, /a running daemon keeps the values it started with/);
    assert.doesNotMatch(set.stdout, /safety setting/);
    assert.equal(await Deno.readTextFile(`${dir}/config.toml`), '[agent]\nevery = "90s"\n');

    const get = await wats(dir, ["config", "get", "agent.every"]);
    assert.deepEqual(get, { code: 0, stdout: "1m30s\n", stderr: "" });
  });
});

Deno.test("config set agent.sweep infinity turns the sweep off; a bad value lists what is accepted", async () => {
  await withDataDir(async (dir) => {
    const set = await wats(dir, ["config", "set", "agent.sweep", "infinity"]);
    assert.equal(set.stderr, "");
    assert.equal(set.code, 0);
    assert.match(
      set.stdout,
      /^set agent\.sweep = infinity in .*config\.toml \(was 24h, the default\)\n/,
    );
    assert.equal(await Deno.readTextFile(`${dir}/config.toml`), '[agent]\nsweep = "infinity"\n');
    assert.deepEqual(await wats(dir, ["config", "get", "agent.sweep"]), {
      code: 0,
      stdout: "infinity\n",
      stderr: "",
    });
    const bad = await wats(dir, ["config", "set", "agent.sweep", "never"]);
    assert.equal(bad.code, 1);
    assert.equal(
      bad.stderr,
      'error: agent.sweep = "never" is not allowed; agent.sweep must be a duration such as ' +
        "500ms, 90s, 10m or 1h30m, or infinity (or 0) for off\n",
    );
    assert.equal(await Deno.readTextFile(`${dir}/config.toml`), '[agent]\nsweep = "infinity"\n');
  });
});

Deno.test("config get prints lists comma-separated and the profile from the OS user", async () => {
  await withDataDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/config.toml`, '[agent]\ntools = ["Read", "Grep"]\n');
    assert.equal((await wats(dir, ["config", "get", "agent.tools"])).stdout, "Read,Grep\n");
    assert.equal((await wats(dir, ["config", "get", "agent.profile"])).stdout, "tester-agent\n");
  });
});

Deno.test("config list shows each value's source: env, file, flag and default", async () => {
  await withDataDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/config.toml`, "[agent]\nmax_usd_per_day = 1.5\n");
    const r = await wats(dir, ["config", "list", "--every", "2m"], { WATS_AGENT_MAX_TURNS: "3" });
    assert.equal(r.code, 0);
    assert.equal(r.stderr, "");
    const row = (key: string) => r.stdout.split("\n").find((l) => l.slice(2).startsWith(key + " "));
    assert.match(row("agent.max_turns")!, /^\* agent\.max_turns\s+3\s+env$/);
    assert.match(row("agent.max_usd_per_day")!, /^\* agent\.max_usd_per_day\s+1\.5\s+file$/);
    assert.match(row("agent.every")!, /^ {2}agent\.every\s+2m\s+flag$/);
    assert.match(row("agent.runtime")!, /^ {2}agent\.runtime\s+none\s+default$/);
    assert.match(r.stdout, /\* safety setting/);
  });
});

Deno.test("config list shows each [notify.NAME] target by host, never the URL's path; a bad one fails with its line", async () => {
  await withDataDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/config.toml`,
      `[notify.phone]\ntype = "ntfy"\nurl = "https://ntfy.example.org/secret-topic"\n` +
        `events = ["permission", "halted"]\ntoken_env = "NTFY_TOKEN"\n\n` +
        `[notify.team]\ntype = "slack"\nurl_env = "SLACK_URL"\n`,
    );
    const r = await wats(dir, ["config", "list"]);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.split("\n").filter((l) => l.startsWith("notify."));
    assert.deepEqual(lines, [
      "notify.phone: ntfy to ntfy.example.org, permission, halted; token in $NTFY_TOKEN",
      "notify.team: slack to the URL in $SLACK_URL, every event",
    ]);
    assert.doesNotMatch(r.stdout, /secret-topic/);

    await Deno.writeTextFile(
      `${dir}/config.toml`,
      `[notify.x]\ntype = "sms"\nurl = "https://a.example"\n`,
    );
    const bad = await wats(dir, ["config", "list"]);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /^error: .*config\.toml:2: notify\.x\.type = "sms" is not allowed/);
  });
});

Deno.test("an unknown key in config.toml fails with exit 1 naming the key, file and line", async () => {
  await withDataDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/config.toml`, "# mine\n[agent]\nmax_turn = 3\n");
    const r = await wats(dir, ["config", "list"]);
    assert.equal(r.code, 1);
    assert.equal(r.stdout, "");
    assert.equal(
      r.stderr,
      `error: ${dir}/config.toml:3: unknown key agent.max_turn (did you mean agent.max_turns?); ` +
        "fix or remove the line in an editor, then run the command again\n",
    );
  });
});

Deno.test("config set of an unknown key or a bad value fails and leaves the file alone", async () => {
  await withDataDir(async (dir) => {
    const original = "# keep me\n[agent]\nmax_turns = 4\n";
    await Deno.writeTextFile(`${dir}/config.toml`, original);
    const unknown = await wats(dir, ["config", "set", "agent.max_turn", "5"]);
    assert.equal(unknown.code, 1);
    assert.equal(unknown.stdout, "");
    assert.match(
      unknown.stderr,
      /^error: cannot set agent\.max_turn: unknown key; did you mean agent\.max_turns\?/,
    );
    const bad = await wats(dir, ["config", "set", "agent.access", "open"]);
    assert.equal(bad.code, 1);
    assert.equal(
      bad.stderr,
      'error: agent.access = "open" is not allowed; use one of locked, workspace, inherit\n',
    );
    assert.equal(await Deno.readTextFile(`${dir}/config.toml`), original);
  });
});

Deno.test("a bad WATS_ variable fails get with the variable named", async () => {
  await withDataDir(async (dir) => {
    const r = await wats(dir, ["config", "get", "agent.max_turns"], {
      WATS_AGENT_MAX_TURNS: "abc",
    });
    assert.equal(r.code, 1);
    assert.equal(r.stdout, "");
    assert.equal(
      r.stderr,
      "error: WATS_AGENT_MAX_TURNS=abc: agent.max_turns must be a whole number ≥ 1\n",
    );
  });
});

Deno.test("config set on a safety key says status flags it until config ack", async () => {
  await withDataDir(async (dir) => {
    const r = await wats(dir, ["config", "set", "agent.review", "true"]);
    assert.equal(r.code, 0);
    assert.ok(
      r.stdout.includes(
        "agent.review is a safety setting: `wats status` flags the change until you run `wats config ack`\n",
      ),
      r.stdout,
    );
  });
});

Deno.test("config set says when a WATS_ variable overrides the new value", async () => {
  await withDataDir(async (dir) => {
    const r = await wats(dir, ["config", "set", "agent.max_turns", "5"], {
      WATS_AGENT_MAX_TURNS: "3",
    });
    assert.equal(r.code, 0);
    assert.match(r.stdout, /WATS_AGENT_MAX_TURNS=3 is set and overrides config\.toml/);
  });
});

Deno.test("config ack records the safety values, then reports only what changed", async () => {
  await withDataDir(async (dir) => {
    const first = await wats(dir, ["config", "ack"]);
    assert.equal(first.code, 0);
    assert.equal(first.stderr, "");
    assert.match(first.stdout, /recorded the safety settings in .*safety\.json:\n/);
    assert.match(first.stdout, / {2}agent\.review = false\n/);
    const saved = JSON.parse(await Deno.readTextFile(`${dir}/safety.json`));
    assert.equal(saved.version, 1);
    assert.equal(saved.values["agent.review"], false);
    assert.equal(saved.values["agent.timeout"], "10m");

    await wats(dir, ["config", "set", "agent.review", "true"]);
    const listed = await wats(dir, ["config", "list"]);
    assert.match(
      listed.stdout,
      /agent\.review changed from false to true \(not acknowledged: run `wats config ack`\)/,
    );

    const second = await wats(dir, ["config", "ack"]);
    assert.equal(second.code, 0);
    assert.equal(
      second.stdout,
      `acknowledged in ${dir}/safety.json:\n  agent.review: false -> true\n`,
    );
    const again = await wats(dir, ["config", "ack"]);
    assert.match(again.stdout, /^nothing to acknowledge/);
  });
});

Deno.test("a changed harness or checkout shows as a safety change until ack, naming an env key, never its value", async () => {
  await withDataDir(async (dir) => {
    const config = (command: string, key: string, repo: string) =>
      `[harnesses.claude]\ncommand = "${command}"\nenv = { ANTHROPIC_API_KEY = "${key}" }\n\n` +
      `[checkouts.app]\npath = "${repo}"\n`;
    await Deno.writeTextFile(`${dir}/config.toml`, config("node", "sk-OLD-5e1f", "/srv/app"));
    const first = await wats(dir, ["config", "ack"]);
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, / {2}harnesses\.claude\.command = node\n/);
    assert.match(first.stdout, / {2}harnesses\.claude\.env\.ANTHROPIC_API_KEY = \(not shown\)\n/);
    assert.match(first.stdout, / {2}checkouts\.app\.path = \/srv\/app\n/);
    const saved = await Deno.readTextFile(`${dir}/safety.json`);
    assert.ok(!saved.includes("sk-OLD-5e1f"), saved);

    await Deno.writeTextFile(`${dir}/config.toml`, config("/tmp/evil", "sk-NEW-9c3b", "/home"));
    const listed = await wats(dir, ["config", "list"]);
    assert.equal(listed.code, 0, listed.stderr);
    const notices = listed.stdout.split("\n").filter((l) => l.includes("not acknowledged"));
    assert.deepEqual(notices, [
      "checkouts.app.path changed from /srv/app to /home (not acknowledged: run `wats config ack`)",
      "harnesses.claude.command changed from node to /tmp/evil (not acknowledged: run `wats config ack`)",
      "harnesses.claude.env.ANTHROPIC_API_KEY changed (the value is not shown) (not acknowledged: run `wats config ack`)",
    ]);
    const acked = await wats(dir, ["config", "ack"]);
    assert.equal(acked.code, 0, acked.stderr);
    assert.match(acked.stdout, / {2}harnesses\.claude\.command: node -> \/tmp\/evil\n/);
    assert.match(
      acked.stdout,
      / {2}harnesses\.claude\.env\.ANTHROPIC_API_KEY: \(not shown\) -> \(not shown\)\n/,
    );
    for (
      const out of [listed.stdout, acked.stdout, await Deno.readTextFile(`${dir}/safety.json`)]
    ) {
      assert.ok(!out.includes("sk-OLD-5e1f") && !out.includes("sk-NEW-9c3b"), out);
    }
    const after = await wats(dir, ["config", "list"]);
    assert.doesNotMatch(after.stdout, /not acknowledged/);
  });
});

Deno.test("ack counts WATS_ variables but never flags", async () => {
  await withDataDir(async (dir) => {
    await wats(dir, ["config", "ack"], { WATS_AGENT_MAX_TURNS: "4" });
    const saved = JSON.parse(await Deno.readTextFile(`${dir}/safety.json`));
    assert.equal(saved.values["agent.max_turns"], 4);
    const withFlag = await wats(dir, ["config", "ack", "--every", "1m"]);
    assert.equal(withFlag.code, 2);
  });
});

Deno.test("removed keys: load with one warning each, set refuses them, unset removes them", async () => {
  await withDataDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/config.toml`,
      '# old\n[agent]\nthread_backoff = "1m"\nthread_backoff_max = "1h"\nmax_turns = 3\n',
    );
    const get = await wats(dir, ["config", "get", "agent.max_turns"]);
    assert.equal(get.code, 0);
    assert.equal(get.stdout, "3\n");
    assert.equal(
      get.stderr,
      "warning: agent.thread_backoff is no longer used (loop detector, ADR 0011); remove it\n" +
        "warning: agent.thread_backoff_max is no longer used (loop detector, ADR 0011); remove it\n",
    );

    const set = await wats(dir, ["config", "set", "agent.thread_backoff", "2m"]);
    assert.equal(set.code, 1);
    assert.match(set.stderr, /agent\.thread_backoff was removed: the loop detector/);

    const unset = await wats(dir, ["config", "unset", "agent.thread_backoff"]);
    assert.equal(unset.code, 0);
    assert.match(unset.stdout, /removed agent\.thread_backoff from .* \(it is no longer used\)/);
    assert.equal(
      await Deno.readTextFile(`${dir}/config.toml`),
      '# old\n[agent]\nthread_backoff_max = "1h"\nmax_turns = 3\n',
    );
  });
});

Deno.test("config unset brings the default back and keeps the file's comments", async () => {
  await withDataDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/config.toml`,
      "# top\n[agent]\nmax_turns = 3\nreview = true\n",
    );
    const r = await wats(dir, ["config", "unset", "agent.max_turns"]);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /removed agent\.max_turns from .*config\.toml \(now 10, the default\)/);
    assert.equal(await Deno.readTextFile(`${dir}/config.toml`), "# top\n[agent]\nreview = true\n");
    const none = await wats(dir, ["config", "unset", "agent.max_turns"]);
    assert.match(none.stdout, /agent\.max_turns is not set in .*; nothing changed/);
  });
});

Deno.test("config SUB --help prints help on stdout and exits 0", async () => {
  await withDataDir(async (dir) => {
    for (const sub of ["get", "set", "ack"]) {
      const r = await wats(dir, ["config", sub, "--help"]);
      assert.equal(r.code, 0);
      assert.equal(r.stderr, "");
      assert.match(r.stdout, new RegExp(`^Usage: wats config ${sub}`));
    }
  });
});

Deno.test("config get and list never create the data directory", async () => {
  await withDataDir(async (parent) => {
    const dir = `${parent}/missing`;
    const r = await wats(dir, ["config", "get", "agent.runtime"]);
    assert.deepEqual(r, { code: 0, stdout: "none\n", stderr: "" });
    await assert.rejects(Deno.stat(dir), Deno.errors.NotFound);
  });
});

/** Starts the test Worker with a command's permissions and reports each write attempt. */
function attemptWrites(
  command: "config-write" | "config-ack",
  dir: string,
): Promise<AttemptResult> {
  const paths = dataPaths(dir);
  const worker = new Worker(new URL("../config/acknowledge_worker.ts", import.meta.url), {
    type: "module",
    deno: { permissions: permissionsFor(command, { paths, self: [] }) },
  });
  return new Promise((resolve, reject) => {
    worker.onmessage = (e: MessageEvent<AttemptResult>) => {
      worker.terminate();
      resolve(e.data);
    };
    worker.onerror = (e) => {
      e.preventDefault();
      worker.terminate();
      reject(e.error ?? new Error(e.message));
    };
    worker.postMessage({ safety: paths.safety, config: paths.config } satisfies AttemptRequest);
  });
}

Deno.test("config set's permissions cannot write safety.json; ack's cannot write config.toml", async () => {
  await withDataDir(async (dir) => {
    assert.deepEqual(await attemptWrites("config-write", dir), {
      acknowledge: "NotCapable",
      writeConfig: "ok",
    });
    await assert.rejects(Deno.stat(`${dir}/safety.json`), Deno.errors.NotFound);
    assert.deepEqual(await attemptWrites("config-ack", dir), {
      acknowledge: "ok",
      writeConfig: "NotCapable",
    });
  });
});
