/**
 * install.sh against local servers on 127.0.0.1 that serve fake release
 * files: a good checksum and signature install; a bad checksum, a bad or
 * missing signature, a release without this platform's build, an unknown
 * platform and an unwritable install folder each fail with a clear message and
 * leave nothing behind (no install folder, no temp files). Plain http is
 * refused, redirects included, unless WATS_ALLOW_HTTP=1 (which the tests on a
 * plain-http server set); an https server with a throwaway certificate checks
 * the real path. The script runs under /bin/sh (dash on Debian: no bash-isms).
 */

import assert from "node:assert/strict";
import { requireTool } from "../support/debian_tools.ts";

const SCRIPT = new URL("../../install.sh", import.meta.url).pathname;
/** The build install.sh picks on this machine (its names follow Deno's targets). */
const TARGET = Deno.build.target;
const FAKE_BINARY = '#!/bin/sh\necho "fake wats"\n';

/** A throwaway release key (SSH ed25519) and the allowed-signers form of its public half. */
function signingKey(): { file: string; pub: string } {
  const dir = Deno.makeTempDirSync({ prefix: "wats-release-key-" });
  const file = `${dir}/key`;
  const out = new Deno.Command("ssh-keygen", {
    args: ["-q", "-t", "ed25519", "-N", "", "-C", "wats-release", "-f", file],
    stdout: "null",
  }).outputSync();
  assert.equal(out.code, 0, "ssh-keygen made a key");
  return { file, pub: Deno.readTextFileSync(`${file}.pub`).trim() };
}

/** The key the fake releases are signed with, and one that is not it. */
const KEY = signingKey();
const OTHER_KEY = signingKey();

/** `text` signed as the release workflow signs SHA256SUMS (`ssh-keygen -Y sign -n wats-release`). */
function sign(text: string, key: { file: string } = KEY): string {
  const file = Deno.makeTempFileSync();
  try {
    Deno.writeTextFileSync(file, text);
    const out = new Deno.Command("ssh-keygen", {
      args: ["-q", "-Y", "sign", "-f", key.file, "-n", "wats-release", file],
      stdout: "null",
      stderr: "piped",
    }).outputSync();
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    return Deno.readTextFileSync(`${file}.sig`);
  } finally {
    for (const f of [file, `${file}.sig`]) Deno.removeSync(f, { recursive: true });
  }
}

async function sha256Hex(text: string): Promise<string> {
  const d = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(d)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** A body, or a redirect to another URL. */
type Served = string | { redirect: string };

/**
 * Serves `files` (path → body or redirect) on 127.0.0.1, over https when given
 * a certificate; anything else is 404. Counts the requests it gets.
 */
function serve(files: Record<string, Served>, tls?: { cert: string; key: string }) {
  let requests = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {}, ...tls }, (req) => {
    requests++;
    const body = files[new URL(req.url).pathname];
    if (body === undefined) return new Response("not found", { status: 404 });
    return typeof body === "string" ? new Response(body) : Response.redirect(body.redirect, 302);
  });
  return {
    url: `${tls ? "https" : "http"}://127.0.0.1:${server.addr.port}`,
    requests: () => requests,
    close: () => server.shutdown(),
  };
}

/** A throwaway certificate for 127.0.0.1, and the file curl trusts it from (CURL_CA_BUNDLE). */
function certificate(dir: string): { cert: string; key: string; bundle: string } {
  const out = new Deno.Command("openssl", {
    args: [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:P-256",
      "-nodes",
      "-subj",
      "/CN=127.0.0.1",
      "-addext",
      "subjectAltName=IP:127.0.0.1",
      "-days",
      "2",
      "-keyout",
      `${dir}/tls.key`,
      "-out",
      `${dir}/tls.crt`,
    ],
    stdout: "null",
    stderr: "piped",
  }).outputSync();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  return {
    cert: Deno.readTextFileSync(`${dir}/tls.crt`),
    key: Deno.readTextFileSync(`${dir}/tls.key`),
    bundle: `${dir}/tls.crt`,
  };
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
      // The fake releases are served over plain http and signed with KEY.
      WATS_ALLOW_HTTP: "1",
      WATS_SIGNING_KEY: KEY.pub,
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

/** The files of a fake release: a binary, SHA256SUMS, and its signature by KEY. */
async function releaseFiles(
  sumFor: string = FAKE_BINARY,
  target: string = TARGET,
): Promise<Record<string, Served>> {
  const sums = `${await sha256Hex(sumFor)}  wats-${target}\n` +
    `${await sha256Hex("other")}  wats-riscv64-unknown-linux-gnu\n`;
  return {
    "/r/SHA256SUMS": sums,
    "/r/SHA256SUMS.sig": sign(sums),
    [`/r/wats-${target}`]: FAKE_BINARY,
  };
}

async function release(sumFor: string = FAKE_BINARY, target: string = TARGET) {
  return serve(await releaseFiles(sumFor, target));
}

Deno.test("install.sh installs a build whose SHA-256 matches SHA256SUMS, signed with the release key, and prints the next command", async () => {
  const box = sandbox();
  const srv = await release();
  try {
    const r = await install(box, { WATS_DOWNLOAD_URL: `${srv.url}/r`, WATS_INSTALL_DIR: box.bin });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, "");
    assert.match(
      r.stdout,
      /Release signature verified: SHA256SUMS was signed with the wats release key/,
    );
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

Deno.test("install.sh refuses plain http unless WATS_ALLOW_HTTP=1, before downloading anything", async () => {
  const box = sandbox();
  const srv = await release();
  try {
    const r = await install(box, {
      WATS_DOWNLOAD_URL: `${srv.url}/r`,
      WATS_INSTALL_DIR: box.bin,
      WATS_ALLOW_HTTP: "",
    });
    assert.equal(r.code, 1);
    assert.equal(
      r.stderr,
      `error: refusing plain http (${srv.url}/r): anyone on the way could change what you download; use an https:// WATS_DOWNLOAD_URL\n`,
    );
    assert.equal(srv.requests(), 0, "nothing was asked of the server");
    assert.deepEqual(listing(box.bin), ["<missing>"]);
    assert.deepEqual(listing(box.tmp), []);
  } finally {
    await srv.close();
    box.close();
  }
});

Deno.test("install.sh installs over https, and refuses a redirect to plain http", async () => {
  const box = sandbox();
  const tls = certificate(box.root);
  const files = await releaseFiles();
  const plain = serve(files);
  const secure = serve(files, tls);
  const redirecting = serve({
    ...files,
    [`/r/wats-${TARGET}`]: { redirect: `${plain.url}/r/wats-${TARGET}` },
  }, tls);
  const env = { WATS_ALLOW_HTTP: "", CURL_CA_BUNDLE: tls.bundle, WATS_INSTALL_DIR: box.bin };
  try {
    const ok = await install(box, { ...env, WATS_DOWNLOAD_URL: `${secure.url}/r` });
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(ok.stderr, "");
    assert.equal(Deno.readTextFileSync(`${box.bin}/wats`), FAKE_BINARY);
    Deno.removeSync(box.bin, { recursive: true });

    const r = await install(box, { ...env, WATS_DOWNLOAD_URL: `${redirecting.url}/r` });
    assert.equal(r.code, 1);
    assert.match(r.stderr, new RegExp(`error: could not download ${redirecting.url}/r/wats-`));
    assert.equal(plain.requests(), 0, "the http URL was never fetched");
    assert.deepEqual(listing(box.bin), ["<missing>"]);
    assert.deepEqual(listing(box.tmp), []);
  } finally {
    await plain.close();
    await secure.close();
    await redirecting.close();
    box.close();
  }
});

Deno.test("install.sh refuses SHA256SUMS whose signature is not the release key's, or missing", async () => {
  const box = sandbox();
  // What someone who can replace the release's files would serve: another
  // binary, SHA256SUMS that matches it, signed with a key of their own.
  const evil = "#!/bin/sh\necho evil\n";
  const sums = `${await sha256Hex(evil)}  wats-${TARGET}\n`;
  const forged = serve({
    "/r/SHA256SUMS": sums,
    "/r/SHA256SUMS.sig": sign(sums, OTHER_KEY),
    [`/r/wats-${TARGET}`]: evil,
  });
  // The genuine signature, over SHA256SUMS that were changed afterwards.
  const genuine = await releaseFiles();
  const changed = serve({ ...genuine, "/r/SHA256SUMS": sums, [`/r/wats-${TARGET}`]: evil });
  const { "/r/SHA256SUMS.sig": _sig, ...withoutSignature } = genuine;
  const unsigned = serve(withoutSignature);
  try {
    for (const srv of [forged, changed]) {
      const r = await install(box, {
        WATS_DOWNLOAD_URL: `${srv.url}/r`,
        WATS_INSTALL_DIR: box.bin,
      });
      assert.equal(r.code, 1);
      assert.equal(
        r.stderr,
        "error: the release signature does not match the wats release key: SHA256SUMS may have been tampered with; nothing was installed\n",
      );
      assert.deepEqual(listing(box.bin), ["<missing>"]);
      assert.deepEqual(listing(box.tmp), []);
    }
    const r = await install(box, {
      WATS_DOWNLOAD_URL: `${unsigned.url}/r`,
      WATS_INSTALL_DIR: box.bin,
    });
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      /^error: could not download .*\/SHA256SUMS\.sig: a signed release has it/m,
    );
    assert.deepEqual(listing(box.bin), ["<missing>"]);
  } finally {
    await forged.close();
    await changed.close();
    await unsigned.close();
    box.close();
  }
});

Deno.test("install.sh says when it cannot check the signature: no key, or an ssh-keygen without -Y", async () => {
  const box = sandbox();
  const srv = await release();
  const oldKeygen = `${box.root}/oldbin`;
  Deno.mkdirSync(oldKeygen);
  // OpenSSH before 8.1: -Y is an unknown option.
  Deno.writeTextFileSync(
    `${oldKeygen}/ssh-keygen`,
    '#!/bin/sh\necho "ssh-keygen: illegal option -- Y" >&2\necho "usage: ssh-keygen [-q] ..." >&2\nexit 1\n',
    { mode: 0o755 },
  );
  try {
    const old = await install(
      box,
      { WATS_DOWNLOAD_URL: `${srv.url}/r`, WATS_INSTALL_DIR: box.bin },
      `${oldKeygen}:`,
    );
    assert.equal(old.code, 0, old.stderr);
    assert.equal(
      old.stderr,
      "warning: this ssh-keygen cannot check signatures (OpenSSH 8.1 or later can): the release signature was not checked, only the download against SHA256SUMS\n",
    );
    assert.equal(Deno.readTextFileSync(`${box.bin}/wats`), FAKE_BINARY);

    const noKey = await install(box, {
      WATS_DOWNLOAD_URL: `${srv.url}/r`,
      WATS_INSTALL_DIR: box.bin,
      WATS_SIGNING_KEY: "",
    });
    assert.equal(noKey.code, 0, noKey.stderr);
    assert.match(noKey.stderr, /^warning: this install\.sh carries no release key: /);
    assert.doesNotMatch(noKey.stdout, /signature verified/);
  } finally {
    await srv.close();
    box.close();
  }
});
