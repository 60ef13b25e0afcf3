/**
 * The pinned CLIs install from a committed lock (docs/decisions/supply_chain.md):
 * the lock names every pin at its version and every transitive dependency with
 * an exact version and an integrity hash, and prepare.ts installs from it with
 * `npm ci` (here into a throwaway folder, with a recording `npm` on PATH, so
 * `.cache/clis/` is never touched).
 *
 * @module
 */

import assert from "node:assert/strict";
import { CLIS_LOCK_DIR, clisStamp, PINNED_CLIS, type PinnedCli, stampFile } from "./clis.ts";
import { prepareClis } from "./prepare.ts";

const PINS: Record<string, string> = Object.fromEntries(
  Object.values(PINNED_CLIS as Record<string, PinnedCli>).map((c) => [c.pkg, c.version]),
);

function readJson(path: string): Record<string, unknown> {
  return JSON.parse(Deno.readTextFileSync(path));
}

Deno.test("the committed package.json and lock name exactly the pinned CLIs at their versions", () => {
  const pkg = readJson(`${CLIS_LOCK_DIR}/package.json`);
  assert.deepEqual(pkg.dependencies, PINS, "package.json: change it with the pins, then re-lock");
  const lock = readJson(`${CLIS_LOCK_DIR}/package-lock.json`) as {
    lockfileVersion: number;
    packages: Record<string, { version?: string; integrity?: string; link?: boolean }>;
  };
  assert.equal(lock.lockfileVersion, 3);
  assert.deepEqual((lock.packages[""] as { dependencies?: unknown }).dependencies, PINS);
  for (const [name, version] of Object.entries(PINS)) {
    assert.equal(lock.packages[`node_modules/${name}`]?.version, version, name);
  }
});

Deno.test("every package in the CLIs' lock has an exact version and an integrity hash", () => {
  const lock = readJson(`${CLIS_LOCK_DIR}/package-lock.json`) as {
    packages: Record<string, { version?: string; integrity?: string; link?: boolean }>;
  };
  const entries = Object.entries(lock.packages).filter(([path]) => path !== "");
  assert.ok(entries.length > Object.keys(PINS).length, "the transitive dependencies are locked");
  for (const [path, p] of entries) {
    if (p.link) continue;
    assert.match(p.version ?? "", /^\d+\.\d+\.\d+(-[\w.-]+)?$/, `${path}: an exact version`);
    assert.match(p.integrity ?? "", /^sha512-[A-Za-z0-9+/]+=*$/, `${path}: an integrity hash`);
  }
});

/**
 * A stand-in `npm` that records how it was called and, for `ci`, lays out each
 * pinned package at the version the package.json it finds asks for, with a
 * program that answers its probe (an empty script for node, `exit 0` else).
 */
function fakeNpm(bin: string, calls: string): void {
  const script = `#!/bin/sh
printf '%s|%s\\n' "$PWD" "$*" >> '${calls}'
[ "$1" = ci ] || exit 3
[ -f package-lock.json ] || exit 4
${
    Object.values(PINNED_CLIS as Record<string, PinnedCli>).map((c) =>
      `mkdir -p "node_modules/${c.pkg}/$(dirname ${c.bin})"${
        c.cwd ? ` "node_modules/${c.pkg}/${c.cwd}"` : ""
      }
printf '{"version":"${c.version}"}' > "node_modules/${c.pkg}/package.json"
printf '${c.node ? "" : "#!/bin/sh\\nexit 0\\n"}' > "node_modules/${c.pkg}/${c.bin}"
chmod +x "node_modules/${c.pkg}/${c.bin}"`
    ).join("\n")
  }
`;
  Deno.writeTextFileSync(`${bin}/npm`, script, { mode: 0o755 });
}

Deno.test("prepare installs the CLIs with npm ci from the committed lock, once, and again when the stamp is stale", async () => {
  const root = Deno.makeTempDirSync({ prefix: "wats-clis-" });
  const dir = `${root}/clis`;
  const bin = `${root}/bin`;
  const calls = `${root}/calls`;
  Deno.mkdirSync(bin);
  fakeNpm(bin, calls);
  const path = Deno.env.get("PATH") ?? "";
  Deno.env.set("PATH", `${bin}:${path}`);
  const recorded = () => Deno.readTextFileSync(calls).trim().split("\n");
  try {
    assert.equal(await prepareClis(dir), 0);
    assert.deepEqual(recorded(), [`${dir}|ci --no-audit --no-fund`]);
    assert.equal(
      Deno.readTextFileSync(`${dir}/package-lock.json`),
      Deno.readTextFileSync(`${CLIS_LOCK_DIR}/package-lock.json`),
      "installed from the committed lock",
    );
    assert.equal(Deno.readTextFileSync(stampFile(dir)), clisStamp());

    // Up to date: nothing runs.
    assert.equal(await prepareClis(dir), 0);
    assert.equal(recorded().length, 1);

    // A stamp from before the lock (the pin list alone) installs again.
    Deno.writeTextFileSync(stampFile(dir), JSON.stringify(Object.keys(PINS)));
    assert.equal(await prepareClis(dir), 0);
    assert.equal(recorded().length, 2);
  } finally {
    Deno.env.set("PATH", path);
    Deno.removeSync(root, { recursive: true });
  }
});
