import assert from "node:assert/strict";
import { DEFAULT_IDLE_MS } from "../../src/config/acp_tables.ts";

import { errorOf, load } from "./config_text.ts";

Deno.test("[harnesses.NAME] and [checkouts.NAME] load with their defaults", () => {
  const r = load(`
[harnesses.claude]
command = "claude-agent-acp"
env = { ANTHROPIC_API_KEY = "k" }
meta = { claudeCode = { options = { model = "m" } } }
context = ["CLAUDE.md"]

[harnesses.codex]
command = "/usr/bin/node"
args = ["codex-acp.js"]
idle = "90s"
enabled = false

[checkouts.billing]
path = "~/src/billing/"
base = "origin/main"
fetch = true
merge = "ff"

[checkouts.web]
path = "/srv/web"

[agent]
checkouts = ["billing"]

[policy]
allow = ["claude/edit(src/**)", "*/read"]
deny = ["claude/delete", "claude/execute(rm -rf *)"]
`.replace("~/src", "/home/a/src"));
  assert.deepEqual(r.acp.harnesses.claude, {
    name: "claude",
    command: "claude-agent-acp",
    args: [],
    env: { ANTHROPIC_API_KEY: "k" },
    meta: { claudeCode: { options: { model: "m" } } },
    context: ["CLAUDE.md"],
    idle: DEFAULT_IDLE_MS,
    enabled: true,
  });
  assert.equal(r.acp.harnesses.codex!.idle, 90_000);
  assert.equal(r.acp.harnesses.codex!.enabled, false);
  assert.deepEqual(r.acp.checkouts.billing, {
    name: "billing",
    path: "/home/a/src/billing",
    base: "origin/main",
    fetch: true,
    merge: "ff",
  });
  assert.deepEqual(r.acp.checkouts.web, {
    name: "web",
    path: "/srv/web",
    base: "HEAD",
    fetch: false,
    merge: "ff",
  });
  assert.deepEqual(r.values["agent.checkouts"], ["billing"]);
  assert.deepEqual(r.values["policy.allow"], ["claude/edit(src/**)", "*/read"]);
  assert.deepEqual(r.values["policy.deny"], ["claude/delete", "claude/execute(rm -rf *)"]);
});

Deno.test("a bad harness or checkout value names the file and line", () => {
  assert.match(
    errorOf('[harnesses.claude]\nargs = ["x"]\n'),
    /^\/data\/wats\/config\.toml:1: harnesses\.claude\.command = \(missing\) is not allowed; a harness needs a command/,
  );
  assert.match(
    errorOf('[harnesses.claude]\ncommand = "c"\nidle = "soon"\n'),
    /config\.toml:3: harnesses\.claude\.idle = "soon" is not allowed; must be a duration/,
  );
  assert.match(
    errorOf('[harnesses.claude]\ncommand = "c"\ncomand = "d"\n'),
    /config\.toml:3: unknown key harnesses\.claude\.comand; the keys of \[harnesses\.NAME\] are command, args/,
  );
  assert.match(
    errorOf('[harnesses.Claude]\ncommand = "c"\n'),
    /config\.toml:1: harnesses\.Claude = "Claude" is not allowed; the name must be lowercase/,
  );
  assert.match(
    errorOf('\n[checkouts.billing]\npath = "srv/billing"\n'),
    /config\.toml:3: checkouts\.billing\.path = "srv\/billing" is not allowed; must be the absolute path/,
  );
  assert.match(
    errorOf('[checkouts.billing]\npath = "/srv"\nbase = "--upload-pack=x"\n'),
    /config\.toml:3: checkouts\.billing\.base .* must be a git ref/,
  );
  assert.match(
    errorOf('[checkouts.billing]\npath = "/srv"\nmerge = "squash"\n'),
    /config\.toml:3: checkouts\.billing\.merge = "squash" is not allowed; must be "ff" .* or "merge"/,
  );
  assert.match(
    errorOf('[harnesses.claude]\ncommand = "c"\ncontext = ["../secret"]\n'),
    /config\.toml:3: .*context files are paths inside the worktree/,
  );
});

Deno.test("policy rules are checked: HARNESS/KIND with an optional (GLOB)", () => {
  assert.match(
    errorOf('[policy]\nallow = ["edit(src/*)"]\n'),
    /config\.toml:2: policy\.allow = \["edit\(src\/\*\)"\] is not allowed; policy\.allow must be a list of rules/,
  );
  assert.match(errorOf("[policy]\nfoo = 1\n"), /unknown key policy\.foo/);
});

Deno.test("a harness wats does not know declares its state folder and login files", () => {
  const r = load(`
[harnesses.gemini]
command = "gemini"
args = ["--experimental-acp"]
state = "~/.gemini"
login = ["oauth_creds.json", "settings.json"]
`);
  assert.deepEqual(r.acp.harnesses.gemini!.state, {
    dir: "~/.gemini",
    login: ["oauth_creds.json", "settings.json"],
  });
  const bad = (lines: string) => errorOf(`[harnesses.g]\ncommand = "g"\n${lines}\n`);
  // One folder directly under home, plain file names: nothing that could run through a link.
  for (const state of ['"/etc/g"', '"~/.config/g"', '"~/.."', '"~/"', "1"]) {
    assert.match(bad(`state = ${state}`), /harnesses\.g\.state = .* is not allowed; must be one/);
  }
  assert.match(
    bad('state = "~/.g"\nlogin = ["../.ssh/id_rsa"]'),
    /harnesses\.g\.login = "\.\.\/\.ssh\/id_rsa" is not allowed; must name files directly/,
  );
  assert.match(bad('login = ["a"]'), /login needs harnesses\.g\.state/);
});
