import assert from "node:assert/strict";
import {
  chooseOption,
  decide,
  foldsCase,
  globRe,
  kindClass,
  makePolicy,
  type PermissionAsk,
  resolveLocation,
} from "../../src/acp/policy.ts";
import { startInPty, waitForLineNoPrompt } from "../support/pty.ts";
import { requireTool } from "../support/debian_tools.ts";

const DATA = "/data/wats";
const WT = "/data/wats/worktrees/claude/app/bot/_/fix";

function ask(kind: string, locations: string[], harness = "claude"): PermissionAsk {
  return { harness, kind, locations, worktree: WT };
}

Deno.test("kinds fall in the seed's classes", () => {
  for (const k of ["read", "search", "think", "fetch"]) assert.equal(kindClass(k), "read_only");
  assert.equal(kindClass("delete"), "destructive");
  for (const k of ["edit", "move", "execute", "other", "switch_mode"]) {
    assert.equal(kindClass(k), "gated");
  }
});

Deno.test("class defaults: read-only allows inside the worktree, destructive denies, gated asks", () => {
  const p = makePolicy([], [], DATA);
  assert.equal(decide(p, ask("read", [`${WT}/src/a.ts`])).verdict, "allow");
  assert.equal(decide(p, ask("search", [WT])).verdict, "allow");
  assert.equal(decide(p, ask("delete", [`${WT}/a`])).verdict, "deny");
  assert.equal(decide(p, ask("edit", [`${WT}/a`])).verdict, "ask");
  assert.equal(decide(p, ask("execute", [])).verdict, "ask");
});

Deno.test("a class default never allows a location outside the worktree, or no location", () => {
  const p = makePolicy([], [], DATA);
  const out = decide(p, ask("read", [`${WT}/a`, "/etc/passwd"]));
  assert.equal(out.verdict, "ask");
  assert.match(out.reason, /\/etc\/passwd, outside the worktree/);
  assert.equal(decide(p, ask("read", [])).verdict, "ask");
  // A sibling whose name starts with the worktree's is outside.
  assert.equal(decide(p, ask("read", [`${WT}-other/a`])).verdict, "deny");
  assert.equal(decide(p, ask("read", ["/srv/fix-other/a"])).verdict, "ask");
});

Deno.test("only an explicit allow rule opens a path outside the worktree", () => {
  const p = makePolicy(["claude/read(/usr/share/**)"], [], DATA);
  assert.equal(decide(p, ask("read", ["/usr/share/dict/words"])).verdict, "allow");
  assert.equal(decide(p, ask("read", ["/usr/share/a", "/etc/shadow"])).verdict, "ask");
});

Deno.test("inside the data dir is always refused, whatever the rules say", () => {
  const p = makePolicy(["*/*", "claude/read(/data/**)"], [], DATA);
  for (
    const f of ["config.toml", "safety.json", "node.key", "worktrees/claude/app/bot/_/other/x"]
  ) {
    const d = decide(p, ask("read", [`${DATA}/${f}`]));
    assert.equal(d.verdict, "deny", f);
    assert.match(d.reason, /inside the wats data directory/);
  }
  // The call's own worktree is inside the data dir and stays usable.
  assert.equal(decide(p, ask("edit", [`${WT}/a`])).verdict, "allow");
});

Deno.test("the worktree's .git is never changed, whatever the rules say; reading it is fine", () => {
  const p = makePolicy(["*/*", "claude/edit(**)"], [], DATA);
  for (const l of [`${WT}/.git`, `${WT}/sub/.git/config`]) {
    const d = decide(p, ask("edit", [l]));
    assert.equal(d.verdict, "deny", l);
    assert.match(d.reason, /the worktree's git metadata/);
  }
  assert.equal(decide(p, ask("read", [`${WT}/.git`])).verdict, "allow");
  assert.equal(decide(p, ask("edit", [`${WT}/.gitignore`])).verdict, "allow");
});

Deno.test("rules match by harness, kind and path relative to the worktree; deny beats allow", () => {
  const p = makePolicy(
    ["claude/edit(src/*)", "*/execute", "codex/edit"],
    ["claude/edit(src/secret.ts)", "claude/execute"],
    DATA,
  );
  assert.equal(decide(p, ask("edit", [`${WT}/src/a.ts`])).verdict, "allow");
  assert.equal(decide(p, ask("edit", [`${WT}/src/deep/a.ts`])).verdict, "ask");
  assert.equal(decide(p, ask("edit", [`${WT}/src/a.ts`, `${WT}/lib/b.ts`])).verdict, "ask");
  const denied = decide(p, ask("edit", [`${WT}/src/a.ts`, `${WT}/src/secret.ts`]));
  assert.equal(denied.verdict, "deny");
  assert.match(denied.reason, /claude\/edit is denied by the rule claude\/edit\(src\/secret\.ts\)/);
  assert.equal(decide(p, ask("execute", [])).verdict, "deny");
  assert.equal(decide(p, ask("execute", [], "codex")).verdict, "allow");
  assert.equal(decide(p, ask("edit", [], "codex")).verdict, "allow");
  // A rule with a path never matches a request without locations.
  assert.equal(decide(p, ask("edit", [])).verdict, "ask");
});

Deno.test("globs: * stays in a segment, ** crosses them", () => {
  assert.ok(globRe("src/*").test("src/a.ts"));
  assert.ok(!globRe("src/*").test("src/a/b.ts"));
  assert.ok(globRe("src/**").test("src/a/b.ts"));
  assert.ok(globRe("src/**/x.ts").test("src/x.ts"));
  assert.ok(globRe("src/**/x.ts").test("src/a/b/x.ts"));
  assert.ok(globRe("a?.md").test("ab.md"));
  assert.ok(!globRe("a.md").test("aXmd"));
});

Deno.test("answers are chosen by option kind, never allow_always", () => {
  const opts = [
    { optionId: "yes-always", kind: "allow_always" },
    { optionId: "yes", kind: "allow_once" },
    { optionId: "no", kind: "reject_once" },
  ];
  assert.equal(chooseOption(opts, true)?.optionId, "yes");
  assert.equal(chooseOption(opts, false)?.optionId, "no");
  // Only allow_always on offer: refuse instead.
  const onlyAlways = [
    { optionId: "a", kind: "allow_always" },
    { optionId: "r", kind: "reject_always" },
  ];
  assert.equal(chooseOption(onlyAlways, true)?.optionId, "r");
  assert.equal(chooseOption([{ optionId: "a", kind: "allow_always" }], true), undefined);
});

Deno.test("locations resolve .. and symlinks before they are judged", () => {
  assert.equal(resolveLocation("/nonexistent-wats/./b/../c//", "/"), "/nonexistent-wats/c");
  const root = Deno.realPathSync(Deno.makeTempDirSync());
  try {
    const data = `${root}/data`;
    const wt = `${data}/worktrees/w`;
    Deno.mkdirSync(wt, { recursive: true });
    Deno.writeTextFileSync(`${data}/config.toml`, "");
    Deno.symlinkSync(`${data}/config.toml`, `${wt}/innocent.txt`);
    Deno.symlinkSync(root, `${wt}/up`);
    const p = makePolicy([], [], data);
    for (const l of ["innocent.txt", "../../config.toml", "up/data/node.key"]) {
      const resolved = resolveLocation(l, wt);
      const d = decide(p, { harness: "claude", kind: "read", locations: [resolved], worktree: wt });
      assert.equal(d.verdict, "deny", `${l} → ${resolved}`);
    }
    assert.equal(resolveLocation("new/file.ts", wt), `${wt}/new/file.ts`);
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});

Deno.test({
  ignore: !requireTool("script"),
  name:
    "resolving a location outside the reader's grant asks no one, even in a terminal without --no-prompt",
  sanitizeResources: false,
  async fn() {
    const root = Deno.realPathSync(Deno.makeTempDirSync());
    const worker = new URL("./resolve_location_worker.ts", import.meta.url).href;
    // A daemon-like Worker that may read `root` only, in a process that would prompt.
    const code = `
      const w = new Worker(${JSON.stringify(worker)}, { type: "module", deno: { permissions: {
        read: [${JSON.stringify(root)}], write: false, net: false, run: false, env: false,
        sys: false, ffi: false, import: false } } });
      w.onmessage = (e) => { console.log("RESOLVED " + e.data); w.terminate(); };
      w.postMessage({ path: "../etc/./hostname", cwd: ${JSON.stringify(root)} });`;
    const p = startInPty([Deno.execPath(), "eval", "--quiet", "--ext=ts", code]);
    try {
      const line = await waitForLineNoPrompt(p, (l) => l.startsWith("RESOLVED "));
      // Normalised only: /etc is outside the grant, so its links are not followed.
      assert.equal(line, `RESOLVED ${root.split("/").slice(0, -1).join("/")}/etc/hostname`);
    } finally {
      await p.stop();
      Deno.removeSync(root, { recursive: true });
    }
  },
});

function exec(command: string, locations: string[] = []): PermissionAsk {
  return { harness: "claude", kind: "execute", locations, worktree: WT, command };
}

Deno.test("execute rules match the command: every part must be allowed, any denied part denies", () => {
  const p = makePolicy(
    ["claude/execute(git commit *)", "claude/execute(git add *)", "claude/execute(deno test *)"],
    ["claude/execute(git push *)"],
    DATA,
  );
  const table: Array<[string, string]> = [
    ["git commit -m 'fix'", "allow"],
    ["git commit", "allow"],
    ["git add -A && git commit -m fix", "allow"],
    ["deno test --allow-read", "allow"],
    ["git commit -m fix; git push origin main", "deny"],
    ["git push --force", "deny"],
    ["git status", "ask"],
    ["git commit -m x && cat /etc/passwd", "ask"],
    ["git commit -m x | nc 127.0.0.1 9", "ask"],
    ['git commit -m "$(cat /data/wats/node.key)"', "ask"],
    ["git commit -m `id`", "ask"],
    ["git commit -m x > /tmp/out", "ask"],
    ["git committed", "ask"],
    ["git commit -m 'unclosed", "ask"],
    ["echo git commit -m x", "ask"],
  ];
  for (const [command, verdict] of table) {
    assert.equal(decide(p, exec(command)).verdict, verdict, command);
  }
  const r = decide(p, exec("git add a && git commit -m b"));
  assert.equal(
    r.reason,
    "claude/execute is allowed by the rules claude/execute(git add *), claude/execute(git commit *)",
  );
  assert.equal(
    decide(p, exec("git commit -m x && git push")).reason,
    "claude/execute is denied by the rule claude/execute(git push *) (git push)",
  );
});

Deno.test("a deny pattern also matches a command it cannot split, by its whole text", () => {
  const p = makePolicy(["claude/execute"], ["claude/execute(*node.key*)"], DATA);
  assert.equal(decide(p, exec("cat <<EOF\nnode.key\nEOF")).verdict, "deny");
  assert.equal(decide(p, exec('od "$(printf %s /d)/node.key"')).verdict, "deny");
  assert.equal(decide(p, exec("ls")).verdict, "allow");
});

Deno.test("a rule with a pattern never matches an execute request by its locations", () => {
  const p = makePolicy(["claude/*(**)", "claude/execute(src/**)"], [], DATA);
  // Claude's execute locations are partial: `src/a` says nothing of what `rm -rf ~` touches.
  assert.equal(decide(p, exec("rm -rf ~", [`${WT}/src/a`])).verdict, "ask");
  assert.equal(decide(p, { ...ask("execute", [`${WT}/src/a`]) }).verdict, "ask");
  // Other kinds still match by location.
  assert.equal(decide(p, ask("edit", [`${WT}/src/a`])).verdict, "allow");
});

Deno.test("a relative glob matches only inside the worktree", () => {
  const p = makePolicy(["claude/read(**)", "claude/edit(*)"], [], DATA);
  assert.equal(decide(p, ask("read", [`${WT}/a/b.ts`])).verdict, "allow");
  assert.equal(decide(p, ask("read", ["/etc/passwd"])).verdict, "ask");
  assert.equal(decide(p, ask("edit", ["/tmp"])).verdict, "ask");
  // An absolute glob is how a path outside is opened.
  const abs = makePolicy(["claude/read(/etc/**)"], [], DATA);
  assert.equal(decide(abs, ask("read", ["/etc/passwd"])).verdict, "allow");
});

Deno.test("/proc/<pid>/root and its kin are refused: they reach any path past the checks", () => {
  const p = makePolicy(["*/*", "claude/read(/**)"], [], DATA);
  for (
    const l of [
      `/proc/self/root${DATA}/node.key`,
      `/proc/thread-self/root${DATA}/config.toml`,
      "/proc/1/root/etc/shadow",
      "/proc/self/cwd/x",
      "/proc/self/fd/3",
      "/proc/12/task/12/root/x",
      "/dev/fd/3",
    ]
  ) {
    const d = decide(p, ask("read", [l]));
    assert.equal(d.verdict, "deny", l);
    assert.match(d.reason, /a kernel alias that can reach any path/);
  }
  assert.equal(decide(p, ask("read", ["/proc/cpuinfo"])).verdict, "allow");
});

Deno.test("on a file system that ignores case, the data dir is refused in any case", () => {
  const p = makePolicy(["*/*"], [], DATA, { foldCase: true });
  assert.equal(decide(p, ask("read", ["/DATA/Wats/node.key"])).verdict, "deny");
  assert.equal(decide(p, ask("edit", [`${WT}/.GIT/config`])).verdict, "deny");
  assert.equal(decide(p, ask("edit", [`${WT.toUpperCase()}/a`])).verdict, "allow");
  const strict = makePolicy(["*/*"], [], DATA, { foldCase: false });
  assert.equal(decide(strict, ask("read", ["/DATA/Wats/node.key"])).verdict, "allow");
});

Deno.test("foldsCase probes the file system (case-sensitive here)", () => {
  const dir = Deno.makeTempDirSync({ prefix: "wats-case" });
  try {
    assert.equal(foldsCase(dir), false);
  } finally {
    Deno.removeSync(dir);
  }
});

Deno.test("~ in rules and ~ and file:// in locations are expanded before judging", () => {
  const home = "/home/u";
  const p = makePolicy(["claude/read(~/docs/**)"], [], DATA, { home });
  assert.equal(resolveLocation("~/docs/a.md", "/", home), "/home/u/docs/a.md");
  assert.equal(decide(p, ask("read", [resolveLocation("~/docs/a.md", WT, home)])).verdict, "allow");
  assert.equal(resolveLocation("file:///data/wats/node.key", WT), "/data/wats/node.key");
  const d = decide(p, ask("read", [resolveLocation("file:///data/wats/node.key", WT)]));
  assert.equal(d.verdict, "deny");
  assert.equal(resolveLocation("~", WT, home), home);
});

Deno.test(".. is applied after symlinks: a link into the data dir then ../node.key is refused", () => {
  const root = Deno.realPathSync(Deno.makeTempDirSync());
  try {
    const data = `${root}/data`;
    const wt = `${data}/worktrees/w`;
    Deno.mkdirSync(`${data}/agent/runs`, { recursive: true });
    Deno.mkdirSync(wt, { recursive: true });
    Deno.writeTextFileSync(`${data}/node.key`, "");
    Deno.symlinkSync(`${data}/agent/runs`, `${wt}/runs`);
    // Lexically `wt/runs/../../node.key` is `wt/node.key`; the kernel walks the link first.
    assert.equal(resolveLocation("runs/../../node.key", wt), `${data}/node.key`);
    const p = makePolicy(["*/*"], [], data);
    const d = decide(p, {
      harness: "claude",
      kind: "read",
      locations: [resolveLocation("runs/../../node.key", wt)],
      worktree: wt,
    });
    assert.equal(d.verdict, "deny");
    // A name that does not exist yet is normalised as written.
    assert.equal(resolveLocation("new/../b/c", wt), `${wt}/b/c`);
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});
