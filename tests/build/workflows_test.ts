/**
 * The GitHub workflows (.github/workflows/): they parse as YAML (Debian's
 * python3-yaml), name only actions pinned to a full commit SHA, and the
 * release workflow builds what install.sh downloads, stamps the file
 * src/version.ts reads, and runs the smoke test that exists. actionlint runs
 * when it is installed; Debian 12 does not package it, so here it usually is not.
 */

import assert from "node:assert/strict";
import { requireTool } from "../support/debian_tools.ts";
import { ROOT } from "./embedded.ts";
import { LAUNCHER_FLAGS } from "../../src/cli/permissions.ts";

const DIR = `${ROOT}.github/workflows`;
const FILES = ["ci.yml", "release.yml"];

/** Parses YAML with Debian's python3-yaml and returns it as JSON. */
async function parseYaml(path: string): Promise<Record<string, unknown>> {
  const r = await new Deno.Command("/usr/bin/python3", {
    args: [
      "-c",
      "import json, sys, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1])), default=str))",
      path,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(r.code, 0, `${path} is not valid YAML:\n${new TextDecoder().decode(r.stderr)}`);
  return JSON.parse(new TextDecoder().decode(r.stdout));
}

/** Every `uses:` value in a workflow's text. */
function usesOf(text: string): string[] {
  return [...text.matchAll(/^\s*(?:-\s*)?uses:\s*["']?([^\s"'#]+)/gm)].map((m) => m[1]!);
}

/** The `uses:` values not pinned to a full commit SHA. */
export function unpinned(text: string): string[] {
  return usesOf(text).filter((u) => !/^[\w.-]+\/[\w./-]+@[0-9a-f]{40}$/.test(u));
}

type Job = { steps?: Array<{ uses?: string; run?: string }>; needs?: string | string[] };

Deno.test({
  name: "the workflows parse as YAML and name only actions pinned to a commit SHA",
  ignore: !requireTool("python3-yaml"),
  async fn() {
    for (const f of FILES) {
      const text = Deno.readTextFileSync(`${DIR}/${f}`);
      const doc = await parseYaml(`${DIR}/${f}`);
      const jobs = doc.jobs as Record<string, Job>;
      assert.ok(Object.keys(jobs).length > 0, `${f} has jobs`);
      const parsedUses = Object.values(jobs).flatMap((j) => (j.steps ?? []).map((s) => s.uses))
        .filter((u): u is string => u !== undefined);
      assert.deepEqual(parsedUses.sort(), usesOf(text).sort(), `${f}: every uses: is seen`);
      assert.ok(parsedUses.length > 0);
      assert.deepEqual(unpinned(text), [], `${f} names an action by a movable ref`);
    }
  },
});

Deno.test("the pin check flags a tag or branch", () => {
  assert.deepEqual(
    unpinned("steps:\n  - uses: actions/checkout@v4\n  - uses: a/b@main\n  - uses: a/b@0123456\n"),
    ["actions/checkout@v4", "a/b@main", "a/b@0123456"],
  );
});

Deno.test({
  name: "ci.yml runs .ci/run on pushes and pull requests",
  ignore: !requireTool("python3-yaml"),
  async fn() {
    const doc = await parseYaml(`${DIR}/ci.yml`);
    // YAML 1.1 reads the key `on` as true.
    const on = (doc.on ?? doc.true) as Record<string, unknown>;
    assert.ok("push" in on && "pull_request" in on);
    const runs = Object.values(doc.jobs as Record<string, Job>).flatMap((j) =>
      (j.steps ?? []).map((s) => s.run ?? "")
    );
    assert.ok(runs.some((r) => /^bash \.ci\/run$/m.test(r)));
  },
});

Deno.test({
  name:
    "release.yml: on a v* tag, checks, builds every install.sh target, smoke-tests, sums, publishes",
  ignore: !requireTool("python3-yaml"),
  async fn() {
    const text = Deno.readTextFileSync(`${DIR}/release.yml`);
    const doc = await parseYaml(`${DIR}/release.yml`);
    const on = (doc.on ?? doc.true) as { push: { tags: string[] } };
    assert.deepEqual(on.push.tags, ["v*"]);
    const jobs = doc.jobs as Record<string, Job>;
    const runs = (j: Job) => (j.steps ?? []).map((s) => s.run ?? "").join("\n");
    assert.ok(jobs.check && jobs.release, "release.yml has a check and a release job");
    assert.match(runs(jobs.check), /deno task check/);
    assert.equal(jobs.release.needs, "check");
    const release = runs(jobs.release);

    // The targets are the ones install.sh asks for: wats-<cpu>-<os>.
    for (const cpu of ["x86_64", "aarch64"]) {
      for (const os of ["unknown-linux-gnu", "apple-darwin"]) {
        assert.match(release, new RegExp(`\\b${cpu}-${os}\\b`), `builds ${cpu}-${os}`);
      }
    }
    assert.match(release, /--output "dist\/wats-\$target"/);
    // The released binary holds the launcher's flags, `--no-prompt` included.
    const compile = release.split("\n").find((l) => l.includes("deno compile")) ?? "";
    for (const flag of LAUNCHER_FLAGS) assert.match(compile, new RegExp(` ${flag}( |$)`), flag);
    const install = Deno.readTextFileSync(`${ROOT}install.sh`);
    assert.match(install, /^asset="wats-\$target"$/m);

    // The commit stamp writes the file and name src/version.ts reads.
    assert.match(
      release,
      /printf 'export const BUILD_COMMIT: string = "%s";\\n' "\$GITHUB_SHA" > src\/build_info\.ts/,
    );
    assert.match(
      Deno.readTextFileSync(`${ROOT}src/build_info.ts`),
      /^export const BUILD_COMMIT: string = "";$/m,
    );

    // The smoke test it runs exists and is given the commit.
    assert.match(
      release,
      /deno run --allow-all tests\/build\/smoke\.ts dist\/wats-x86_64-unknown-linux-gnu "\$GITHUB_SHA"/,
    );
    Deno.statSync(`${ROOT}tests/build/smoke.ts`);

    // The published install.sh gets this repository; the line it rewrites is there once.
    assert.equal(install.match(/^WATS_REPO_DEFAULT=""$/gm)?.length, 1);
    assert.match(release, /sha256sum wats-\* install\.sh > SHA256SUMS/);
    // SHA256SUMS is signed with the release key, and checked against the public
    // half install.sh carries (one line) before anything is published.
    assert.match(release, /ssh-keygen -q -Y sign -f "\$key" -n wats-release SHA256SUMS/);
    assert.match(
      release,
      /ssh-keygen -Y verify .* -n wats-release -s SHA256SUMS\.sig < SHA256SUMS/,
    );
    assert.equal(install.match(/^WATS_SIGNING_KEY_DEFAULT="[^"\n]*"$/gm)?.length, 1);
    assert.match(install, /^SIGNATURE_NAMESPACE="wats-release"$/m);
    const steps = jobs.release.steps ?? [];
    const at = (re: RegExp) => steps.findIndex((st) => re.test(st.run ?? ""));
    assert.ok(at(/-Y sign/) > at(/> SHA256SUMS/), "signs the sums once written");
    assert.ok(at(/-Y sign/) < at(/gh release create/), "signs before publishing");
    assert.match(release, /gh release create "\$GITHUB_REF_NAME" --verify-tag .* dist\/\*/);
    assert.ok(
      !/pull_request_target|\$\{\{\s*github\.event\./.test(text),
      "no untrusted input in run:",
    );
  },
});

Deno.test({
  name: "actionlint accepts the workflows (when installed: Debian 12 has no package)",
  ignore: (() => {
    try {
      new Deno.Command("actionlint", { args: ["-version"], stdout: "null" }).outputSync();
      return false;
    } catch {
      console.warn("warning: actionlint is not installed (not in Debian 12): skipped");
      return true;
    }
  })(),
  async fn() {
    const r = await new Deno.Command("actionlint", {
      args: FILES.map((f) => `${DIR}/${f}`),
      stdout: "piped",
    }).output();
    assert.equal(r.code, 0, new TextDecoder().decode(r.stdout));
  },
});
