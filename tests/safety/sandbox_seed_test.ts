/**
 * The login copy into an agent's private home runs outside the agent's sandbox, over folders
 * the agent wrote: links it planted there must not steer the copy onto the person's files
 * (issue 26: nothing an agent writes is trusted outside its sandbox). Real bubblewrap.
 */

import assert from "node:assert/strict";
import { Sandboxer } from "../../src/safety/sandboxer.ts";
import { privateHomeOf } from "../../src/safety/sandbox_home.ts";
import { requireTool } from "../support/debian_tools.ts";
import { tempDir } from "../support/rig.ts";
import { AGENTS } from "../../src/runner/runtimes/agents.ts";
import { RUNTIME_FACTS } from "../../src/runner/runtimes/facts.ts";

const bwrap = requireTool("bwrap");

Deno.test({
  name: "links an agent plants in its private home do not carry the login copy onto the " +
    "person's files: each is removed, and the copy lands in the private home",
  ignore: !bwrap,
  async fn() {
    await using dir = tempDir("wats-seed-", "/var/tmp");
    const root = dir.path;
    const home = `${root}/home`, data = `${root}/home/data`, work = `${root}/work`;
    for (const d of [`${home}/.ssh`, `${home}/.claude`, `${home}/.codex`, data, work]) {
      Deno.mkdirSync(d, { recursive: true });
    }
    Deno.writeTextFileSync(`${home}/.ssh/id_ed25519`, "SSH KEY");
    Deno.writeTextFileSync(`${home}/.bashrc`, "RC");
    Deno.writeTextFileSync(`${home}/.claude/.credentials.json`, "CLAUDE LOGIN");
    Deno.writeTextFileSync(`${home}/.codex/auth.json`, "CODEX LOGIN");
    const sandbox = new Sandboxer({
      agents: AGENTS,
      mode: "required",
      hide: [],
      dataDir: data,
      home,
    });
    const target = (kind: "claude" | "codex") => ({
      what: "harness x",
      cwd: work,
      env: { PATH: "/usr/bin:/bin", HOME: home },
      agent: RUNTIME_FACTS[kind].agent!,
      writable: [work],
    });
    await sandbox.prepare(target("claude"));
    const priv = privateHomeOf(data, "harness x", work);
    assert.equal(Deno.readTextFileSync(`${priv}/.claude/.credentials.json`), "CLAUDE LOGIN");

    // What an agent with a shell can do to its own home between two starts.
    Deno.removeSync(`${priv}/.claude`, { recursive: true });
    Deno.symlinkSync(`${home}/.ssh`, `${priv}/.claude`);
    Deno.symlinkSync(`${home}/.bashrc`, `${priv}/.codex/auth.json`);
    Deno.symlinkSync(data, `${priv}/.codex/config.toml`);

    await sandbox.prepare(target("claude"));
    await sandbox.prepare(target("codex"));

    assert.deepEqual([...Deno.readDirSync(`${home}/.ssh`)].map((e) => e.name), ["id_ed25519"]);
    assert.equal(Deno.readTextFileSync(`${home}/.ssh/id_ed25519`), "SSH KEY");
    assert.equal(Deno.readTextFileSync(`${home}/.bashrc`), "RC");
    assert.ok(Deno.statSync(data).isDirectory, "the data dir is still a folder");
    const own = Deno.lstatSync(`${priv}/.claude`);
    assert.ok(own.isDirectory && !own.isSymlink, "the private .claude is a plain folder again");
    assert.equal(Deno.readTextFileSync(`${priv}/.claude/.credentials.json`), "CLAUDE LOGIN");
    assert.ok(!Deno.lstatSync(`${priv}/.codex/auth.json`).isSymlink);
    assert.equal(Deno.readTextFileSync(`${priv}/.codex/auth.json`), "CODEX LOGIN");
    // The person has no Codex config.toml: the planted link is gone and nothing took its place.
    assert.throws(() => Deno.lstatSync(`${priv}/.codex/config.toml`), Deno.errors.NotFound);
  },
});

Deno.test({
  name: "an agent wats does not know gets the login its [harnesses.NAME] declares, and a link " +
    "planted in place of its folder does not carry the copy out",
  ignore: !bwrap,
  async fn() {
    await using dir = tempDir("wats-seed-", "/var/tmp");
    const root = dir.path;
    const home = `${root}/home`, data = `${root}/home/data`, work = `${root}/work`;
    for (const d of [`${home}/.ssh`, `${home}/.gemini`, data, work]) {
      Deno.mkdirSync(d, { recursive: true });
    }
    Deno.writeTextFileSync(`${home}/.ssh/id_ed25519`, "SSH KEY");
    Deno.writeTextFileSync(`${home}/.gemini/oauth_creds.json`, "GEMINI LOGIN");
    Deno.writeTextFileSync(`${home}/.gemini/history`, "NOT A LOGIN");
    const sandbox = new Sandboxer({
      agents: AGENTS,
      mode: "required",
      hide: [],
      dataDir: data,
      home,
    });
    const target = {
      what: "harness gemini",
      cwd: work,
      env: { PATH: "/usr/bin:/bin", HOME: home },
      agent: {
        name: "gemini",
        state: { dir: "~/.gemini", login: ["oauth_creds.json"] } as const,
        hosts: [],
      },
      writable: [work],
    };
    await sandbox.prepare(target);
    const priv = privateHomeOf(data, "harness gemini", work);
    assert.equal(Deno.readTextFileSync(`${priv}/.gemini/oauth_creds.json`), "GEMINI LOGIN");
    assert.throws(() => Deno.lstatSync(`${priv}/.gemini/history`), Deno.errors.NotFound);
    // Without the declaration the same agent gets no login.
    const { agent: _declared, ...other } = { ...target, what: "harness plain" };
    await sandbox.prepare(other);
    const plain = privateHomeOf(data, "harness plain", work);
    assert.throws(() => Deno.lstatSync(`${plain}/.gemini`), Deno.errors.NotFound);

    Deno.removeSync(`${priv}/.gemini`, { recursive: true });
    Deno.symlinkSync(`${home}/.ssh`, `${priv}/.gemini`);
    await sandbox.prepare(target);
    assert.deepEqual([...Deno.readDirSync(`${home}/.ssh`)].map((e) => e.name), ["id_ed25519"]);
    assert.ok(!Deno.lstatSync(`${priv}/.gemini`).isSymlink);
    assert.equal(Deno.readTextFileSync(`${priv}/.gemini/oauth_creds.json`), "GEMINI LOGIN");
  },
});
