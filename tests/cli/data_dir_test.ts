/**
 * A data directory wats cannot create or write in is one `error: …` line that
 * says what to do, and exit code 1: no stack trace, no half-started command.
 */

import assert from "node:assert/strict";
import { runWats } from "../support/cli.ts";

function assertOneErrorLine(stderr: string, pattern: RegExp): void {
  const lines = stderr.trimEnd().split("\n");
  assert.equal(lines.length, 1, `one line, got:\n${stderr}`);
  assert.match(lines[0]!, /^error: /);
  assert.match(lines[0]!, pattern);
  assert.doesNotMatch(stderr, /\n\s+at /, "no stack trace");
}

for (const args of [[], ["node"], ["config", "set", "listen", "127.0.0.1:7447"]]) {
  Deno.test(`\`${["wats", ...args].join(" ")}\` with a data directory that cannot be created says so in one line`, async () => {
    const parent = await Deno.makeTempFile({ prefix: "wats-not-a-dir-" });
    const dir = `${parent}/data`;
    try {
      const r = await runWats(["--data-dir", dir, ...args]);
      assert.equal(r.code, 1);
      assert.equal(r.stdout, "");
      assertOneErrorLine(
        r.stderr,
        new RegExp(
          `cannot create the data directory ${dir} \\(Not a directory\\).*--data-dir DIR or WATS_DATA_DIR`,
        ),
      );
    } finally {
      await Deno.remove(parent);
    }
  });
}

Deno.test({
  name: "`wats` with a data directory it cannot write in says so in one line, with the fix",
  // root writes in any folder: the case cannot arise for root.
  ignore: Deno.uid() === 0,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "wats-data-" });
    await Deno.chmod(dir, 0o500);
    try {
      const r = await runWats(["--data-dir", dir]);
      assert.equal(r.code, 1);
      assert.equal(r.stdout, "");
      assertOneErrorLine(
        r.stderr,
        new RegExp(
          `cannot write in the data directory ${dir} \\(Permission denied\\): ` +
            `make it writable \\(chmod u\\+rwx ${dir}\\)`,
        ),
      );
    } finally {
      await Deno.chmod(dir, 0o700);
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test("a data directory left readable by others (0755, files 0644) is made private by a writer, with one line saying so", async () => {
  const dir = await Deno.makeTempDir({ prefix: "wats-data-" });
  try {
    await Deno.chmod(dir, 0o755);
    await Deno.writeTextFile(`${dir}/config.toml`, "", { mode: 0o644 });
    await Deno.writeTextFile(`${dir}/store.db`, "", { mode: 0o644 });
    await Deno.chmod(`${dir}/config.toml`, 0o644);
    await Deno.chmod(`${dir}/store.db`, 0o644);
    const mode = async (p: string) => ((await Deno.stat(p)).mode! & 0o777).toString(8);

    const r = await runWats(["--data-dir", dir, "config", "set", "listen", "127.0.0.1:7447"]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(await mode(dir), "700");
    assert.equal(await mode(`${dir}/config.toml`), "600");
    assert.equal(await mode(`${dir}/store.db`), "600");
    const lines = r.stderr.trimEnd().split("\n");
    assert.equal(lines.length, 1, r.stderr);
    assert.equal(
      lines[0],
      `wats: made the data directory ${dir} private (the folder 0755 → 0700, ` +
        `config.toml 0644 → 0600, store.db 0644 → 0600): other users could read it`,
    );

    // Already private: nothing to say.
    const again = await runWats(["--data-dir", dir, "config", "set", "listen", "127.0.0.1:7448"]);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(again.stderr, "");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("files left readable inside a private data directory are made private without a line", async () => {
  const dir = await Deno.makeTempDir({ prefix: "wats-data-" });
  try {
    await Deno.writeTextFile(`${dir}/config.toml`, "");
    await Deno.chmod(`${dir}/config.toml`, 0o644);
    const r = await runWats(["--data-dir", dir, "config", "set", "listen", "127.0.0.1:7447"]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, "");
    assert.equal(((await Deno.stat(`${dir}/config.toml`)).mode! & 0o777).toString(8), "600");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("config.toml created by `wats config set` is readable by its owner only", async () => {
  const dir = await Deno.makeTempDir({ prefix: "wats-data-" });
  try {
    const r = await runWats(["--data-dir", dir, "config", "set", "listen", "127.0.0.1:7447"]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(((await Deno.stat(`${dir}/config.toml`)).mode! & 0o777).toString(8), "600");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
