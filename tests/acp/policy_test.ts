import assert from "node:assert/strict";
import {
  chooseOption,
  decide,
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
