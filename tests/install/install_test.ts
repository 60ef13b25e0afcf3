/**
 * install.sh against a local HTTP server on 127.0.0.1 that serves fake release
 * files: a good checksum installs; a bad checksum, a release without this
 * platform's build, an unknown platform and an unwritable install folder each
 * fail with a clear message and leave nothing behind (no install folder, no
 * temp files). The script runs under /bin/sh (dash on Debian: no bash-isms).
 */

import assert from "node:assert/strict";
import { requireTool } from "../support/debian_tools.ts";

const SCRIPT = new URL("../../install.sh", import.meta.url).pathname;
/** The build install.sh picks on this machine (its names follow Deno's targets). */
const TARGET = Deno.build.target;
const FAKE_BINARY = '#!/bin/sh\necho "fake wats"\n';

async function sha256Hex(text: string): Promise<string> {
  const d = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(d)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** Serves `files` (path → body) on 127.0.0.1; anything else is 404. */
function serve(files: Record<string, string>) {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    const body = files[new URL(req.url).pathname];
    return body === undefined ? new Response("not found", { status: 404 }) : new Response(body);
  });
  return { url: `http://127.0.0.1:${server.addr.port}`, close: () => server.shutdown() };
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** A temp HOME with an empty TMPDIR inside, so leftovers can be seen. */
function sandbox() {
  const root = Deno.makeTempDirSync({ prefix: "wats-install-" });
  Deno.mkdirSync(`${root}/tmp`);
  return {
    root,
    bin: `${root}/bin`,
    tmp: `${root}/tmp`,
    close: () => Deno.removeSync(root, { recursive: true }),
  };
}

async function install(
  box: { root: string; tmp: string },
  env: Record<string, string>,
  pathPrefix = "",
): Promise<Run> {
  const out = await new Deno.Command("/bin/sh", {
    args: [SCRIPT],
    env: {
      HOME: box.root,
      TMPDIR: box.tmp,
      PATH: `${pathPrefix}${Deno.env.get("PATH")}`,
      ...env,
    },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

function listing(dir: string): string[] {
  try {
    return [...Deno.readDirSync(dir)].map((e) => e.name).sort();
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return ["<missing>"];
    throw err;
  }
}

async function release(sumFor: string = FAKE_BINARY, target: string = TARGET) {
  return serve({
    "/r/SHA256SUMS": `${await sha256Hex(sumFor)}  wats-${target}\n` +
      `${await sha256Hex("other")}  wats-riscv64-unknown-linux-gnu\n`,
    [`/r/wats-${target}`]: FAKE_BINARY,
  });
}

Deno.test("install.sh installs a build whose SHA-256 matches SHA256SUMS and prints the next command", async () => {
  const box = sandbox();
  const srv = await release();
  try {
    const r = await install(box, { WATS_DOWNLOAD_URL: `${srv.url}/r`, WATS_INSTALL_DIR: box.bin });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, "");
    assert.equal(Deno.readTextFileSync(`${box.bin}/wats`), FAKE_BINARY);
    assert.equal(Deno.statSync(`${box.bin}/wats`).mode! & 0o777, 0o755);
    assert.match(r.stdout, new RegExp(`Installed ${box.bin}/wats`));
    assert.match(r.stdout, /Next: wats setup claude +\(or: wats setup codex\), then: wats/);
    assert.match(r.stdout, /is not on your PATH; add it: export PATH=/);
    assert.deepEqual(listing(box.bin), ["wats"]);
    assert.deepEqual(listing(box.tmp), []);
  } finally {
    await srv.close();
    box.close();
  }
});

Deno.test("install.sh defaults to ~/.local/bin", async () => {
  const box = sandbox();
  const srv = await release();
  try {
    const r = await install(box, { WATS_DOWNLOAD_URL: `${srv.url}/r` });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(Deno.readTextFileSync(`${box.root}/.local/bin/wats`), FAKE_BINARY);
  } finally {
    await srv.close();
    box.close();
  }
});

Deno.test("install.sh refuses a download whose checksum does not match, and keeps the old binary", async () => {
  const box = sandbox();
  const srv = await release("a different build");
  try {
    const fresh = await install(box, {
      WATS_DOWNLOAD_URL: `${srv.url}/r`,
      WATS_INSTALL_DIR: box.bin,
    });
    assert.equal(fresh.code, 1);
    assert.match(fresh.stderr, /^error: checksum mismatch for wats-.*nothing was installed\n$/);
    assert.deepEqual(listing(box.bin), ["<missing>"], "the install folder is not even created");
    assert.deepEqual(listing(box.tmp), []);

    Deno.mkdirSync(box.bin);
    Deno.writeTextFileSync(`${box.bin}/wats`, "old build");
    const over = await install(box, {
      WATS_DOWNLOAD_URL: `${srv.url}/r`,
      WATS_INSTALL_DIR: box.bin,
    });
    assert.equal(over.code, 1);
    assert.equal(Deno.readTextFileSync(`${box.bin}/wats`), "old build");
    assert.deepEqual(listing(box.bin), ["wats"]);
    assert.deepEqual(listing(box.tmp), []);
  } finally {
    await srv.close();
    box.close();
  }
});

Deno.test("install.sh fails clearly when the release has no build for this platform", async () => {
  const box = sandbox();
  const srv = await release(FAKE_BINARY, "sparc-unknown-linux-gnu");
  try {
    const r = await install(box, { WATS_DOWNLOAD_URL: `${srv.url}/r`, WATS_INSTALL_DIR: box.bin });
    assert.equal(r.code, 1);
    assert.equal(
      r.stderr,
      `error: this release has no build for ${TARGET} (SHA256SUMS lists none): see the release page for the builds there are\n`,
    );
    assert.deepEqual(listing(box.bin), ["<missing>"]);
    assert.deepEqual(listing(box.tmp), []);
  } finally {
    await srv.close();
    box.close();
  }
});

Deno.test("install.sh names an OS or processor it has no build for", async () => {
  const box = sandbox();
  const fakeBin = `${box.root}/fakebin`;
  Deno.mkdirSync(fakeBin);
  try {
    for (
      const [flag, value, want] of [
        [
          "-s",
          "FreeBSD",
          "error: no wats build for FreeBSD: wats is released for Linux and macOS\n",
        ],
        [
          "-m",
          "riscv64",
          "error: no wats build for the riscv64 processor: wats is released for x86_64 and arm64\n",
        ],
      ]
    ) {
      // A `uname` that reports another machine, first on PATH.
      const other = flag === "-s" ? "x86_64" : "Linux";
      Deno.writeTextFileSync(
        `${fakeBin}/uname`,
        `#!/bin/sh\nif [ "$1" = "${flag}" ]; then echo ${value}; else echo ${other}; fi\n`,
        { mode: 0o755 },
      );
      const r = await install(box, { WATS_DOWNLOAD_URL: "http://127.0.0.1:9/none" }, `${fakeBin}:`);
      assert.equal(r.code, 1);
      assert.equal(r.stderr, want);
      assert.equal(r.stdout, "");
      assert.deepEqual(listing(box.tmp), []);
      assert.deepEqual(listing(`${box.root}/.local`), ["<missing>"]);
    }
  } finally {
    box.close();
  }
});

Deno.test("install.sh refuses an install folder it cannot write, before downloading", async () => {
  const box = sandbox();
  const srv = await release();
  try {
    // Root may write anywhere, so the case every user hits: a path through a file.
    Deno.writeTextFileSync(`${box.root}/afile`, "x");
    const r = await install(box, {
      WATS_DOWNLOAD_URL: `${srv.url}/r`,
      WATS_INSTALL_DIR: `${box.root}/afile/bin`,
    });
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      /^error: cannot install into .*\/afile\/bin: .*\/afile is not a folder; choose another with WATS_INSTALL_DIR=/,
    );
    assert.equal(r.stdout, "", "nothing was downloaded");
    assert.deepEqual(listing(box.tmp), []);

    if (Deno.uid() !== 0) {
      Deno.mkdirSync(`${box.root}/locked`, { mode: 0o555 });
      const locked = await install(box, {
        WATS_DOWNLOAD_URL: `${srv.url}/r`,
        WATS_INSTALL_DIR: `${box.root}/locked/bin`,
      });
      assert.equal(locked.code, 1);
      assert.match(locked.stderr, /^error: cannot write to .*\/locked: choose another folder/);
      assert.deepEqual(listing(`${box.root}/locked`), []);
    }
  } finally {
    await srv.close();
    box.close();
  }
});

Deno.test("install.sh says which file it could not download", async () => {
  const box = sandbox();
  const srv = serve({});
  try {
    const r = await install(box, { WATS_DOWNLOAD_URL: `${srv.url}/r`, WATS_INSTALL_DIR: box.bin });
    assert.equal(r.code, 1);
    assert.match(r.stderr, new RegExp(`error: could not download ${srv.url}/r/SHA256SUMS`));
    assert.deepEqual(listing(box.bin), ["<missing>"]);
    assert.deepEqual(listing(box.tmp), []);
  } finally {
    await srv.close();
    box.close();
  }
});

Deno.test("install.sh never hands what it downloads to a shell", () => {
  const code = Deno.readTextFileSync(SCRIPT).split("\n").filter((l) => !/^\s*#/.test(l)).join("\n");
  assert.doesNotMatch(code, /\|\s*(ba|da|z)?sh\b/, "pipes into a shell");
  assert.doesNotMatch(code, /\beval\b|^\s*(\.|source)\s/m, "evaluates text");
  assert.doesNotMatch(code, /"\$tmp\/\$asset"\s*(\n|$|;|&)/, "runs the download");
});

Deno.test({
  name: "install.sh is POSIX sh and shellcheck-clean",
  ignore: !requireTool("shellcheck"),
  async fn() {
    const check = (file: string) =>
      new Deno.Command("shellcheck", { args: ["--shell=sh", file], stdout: "piped" }).output();
    const r = await check(SCRIPT);
    assert.equal(r.code, 0, new TextDecoder().decode(r.stdout));
    // The check can fail: a bash-ism in a sh script is reported.
    const bad = Deno.makeTempFileSync({ suffix: ".sh" });
    try {
      Deno.writeTextFileSync(bad, '#!/bin/sh\nif [[ -n "$1" ]]; then echo "$1"; fi\n');
      assert.notEqual((await check(bad)).code, 0);
    } finally {
      Deno.removeSync(bad);
    }
  },
});
