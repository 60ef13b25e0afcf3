/**
 * `wats service install|uninstall|status` (issue 12): the systemd user unit
 * passes `systemd-analyze verify` and install/uninstall into a temp HOME are
 * idempotent (real subprocesses); the launchd plist is checked with
 * `plutil -lint` where that exists (macOS) and otherwise by a strict reader of
 * the plist XML subset wats writes, plus launchd's key types.
 */

import assert from "node:assert/strict";
import { route } from "../../src/cli/route.ts";
import {
  LAUNCHD_LABEL,
  launchdPlist,
  parseEnvFile,
  serviceArgs,
  serviceCommand,
  type ServiceWorld,
  SYSTEMD_UNIT,
  systemdQuote,
  systemdUnit,
} from "../../src/cli/service.ts";
import { type CommandContext, trustedPath } from "../../src/cli/context.ts";
import { dataPaths } from "../../src/config/paths.ts";
import type { CommandOutput } from "../../src/runner/spawn.ts";
import { requireTool } from "../support/debian_tools.ts";
import { runWats } from "../support/cli.ts";
import { selfCommand } from "../../src/cli/launcher.ts";
import { npxCacheWarning } from "../../src/cli/npx_cache.ts";

const onLinux = Deno.build.os === "linux";

Deno.test("`wats service install|uninstall|status` each run in the service worker with their own set", () => {
  for (const sub of ["install", "uninstall", "status"]) {
    const r = route(["service", sub]);
    assert.equal(r.id, `service-${sub}`);
    assert.equal(r.worker, "service_worker.ts");
    assert.deepEqual(r.words, ["service", sub]);
  }
  assert.equal(route(["service"]).id, "help");
  assert.equal(route(["service", "frob"]).id, "help");
});

async function verify(unitFile: string): Promise<{ code: number; out: string }> {
  const r = await new Deno.Command("systemd-analyze", {
    args: ["verify", unitFile],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: r.code, out: dec.decode(r.stdout) + dec.decode(r.stderr) };
}

Deno.test({
  name: "`wats service install` writes a systemd user unit that systemd-analyze verify accepts",
  ignore: !onLinux || !requireTool("systemd-analyze"),
  async fn() {
    const home = await Deno.makeTempDir({ prefix: "wats-service-" });
    const data = `${home}/data`;
    try {
      const r = await runWats(["--data-dir", data, "service", "install"], { home });
      assert.equal(r.code, 0, r.stderr);
      // A Deno run from npx's cache (README's `npx -y deno@… task test` on a machine without
      // Deno) makes install warn that the unit names a path npm may delete; nothing else.
      const warning = npxCacheWarning(selfCommand(), "the service");
      assert.equal(r.stderr, warning === undefined ? "" : `${warning}\n`);
      const file = `${home}/.config/systemd/user/${SYSTEMD_UNIT}`;
      const unit = await Deno.readTextFile(file);
      assert.match(r.stdout, new RegExp(`^Wrote ${file}:\n`));
      assert.ok(r.stdout.includes(unit), "prints what it wrote");
      assert.match(r.stdout, /\nStart it: systemctl --user enable --now wats\.service\n/);
      const exec = [...selfCommand(), "--data-dir", data].map((w) => `"${w}"`).join(" ");
      assert.match(
        unit,
        new RegExp(`^ExecStart=${exec.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`, "m"),
      );
      assert.match(unit, /^Restart=on-failure$/m);
      assert.match(unit, /^WantedBy=default\.target$/m);
      assert.match(unit, /^Environment="PATH=[^"]+"$/m);
      assert.match(unit, new RegExp(`^EnvironmentFile=-${data}/service\\.env$`, "m"));
      assert.match(
        r.stdout,
        new RegExp(
          `\nEnvironment: KEY=value lines in ${data}/service\\.env reach the node at each start `,
        ),
      );
      const v = await verify(file);
      assert.equal(v.code, 0, v.out);
      assert.equal(v.out, "");
    } finally {
      await Deno.remove(home, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "systemd-analyze verify finds a program path quoted wrongly, and ours with spaces, % and $ right",
  ignore: !onLinux || !requireTool("systemd-analyze"),
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "wats service %i $HOME " });
    try {
      await Deno.symlink("/bin/true", `${dir}/wats`);
      const unitDir = `${dir}/units`;
      await Deno.mkdir(unitDir);
      const spec = {
        self: [`${dir}/wats`],
        dataDir: `${dir}/data $x %h`,
        path: "/usr/bin:/bin",
        envFile: `${dir}/data $x %h/service.env`,
      };
      await Deno.writeTextFile(`${unitDir}/${SYSTEMD_UNIT}`, systemdUnit(spec));
      const good = await verify(`${unitDir}/${SYSTEMD_UNIT}`);
      assert.equal(good.code, 0, good.out);
      assert.equal(good.out, "", "no warning either (a quoted EnvironmentFile= path is one)");
      // Unquoted, the same path is split at its spaces and its %i is expanded.
      const bad = systemdUnit(spec).replace(/^ExecStart=.*$/m, `ExecStart=${dir}/wats`);
      await Deno.writeTextFile(`${unitDir}/${SYSTEMD_UNIT}`, bad);
      assert.notEqual((await verify(`${unitDir}/${SYSTEMD_UNIT}`)).code, 0);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test("systemd quoting escapes quotes, backslashes, specifiers, and $ in arguments", () => {
  assert.equal(systemdQuote('a "b" \\ %i $X', "argument"), '"a \\"b\\" \\\\ %%i $$X"');
  assert.equal(systemdQuote("/opt/my wats/$X%", "program"), '"/opt/my wats/$X%%"');
  assert.throws(() => systemdQuote("a\nb", "value"), /line break/);
});

Deno.test({
  name: "install and uninstall into a temp HOME are idempotent and leave nothing behind",
  ignore: !onLinux,
  async fn() {
    const home = await Deno.makeTempDir({ prefix: "wats-service-" });
    const cfg = `${home}/cfg`;
    const run = (args: string[]) =>
      runWats(["--data-dir", `${home}/data`, "service", ...args], {
        home,
        env: { XDG_CONFIG_HOME: cfg },
      });
    const unitDir = `${cfg}/systemd/user`;
    const file = `${unitDir}/${SYSTEMD_UNIT}`;
    try {
      const first = await run(["install"]);
      assert.equal(first.code, 0, first.stderr);
      const unit = await Deno.readTextFile(file);
      const mtime = (await Deno.stat(file)).mtime;

      const again = await run(["install"]);
      assert.equal(again.code, 0, again.stderr);
      assert.match(again.stdout, /is already up to date; nothing written/);
      assert.equal(await Deno.readTextFile(file), unit);
      assert.deepEqual((await Deno.stat(file)).mtime, mtime);

      const status = await run(["status"]);
      assert.equal(status.code, 0, status.stderr);
      assert.match(status.stdout, new RegExp(`^Installed: ${file} \\(up to date\\)\n`));

      // Another data dir: the unit is rewritten, and starting it needs a reload.
      const other = await runWats(["--data-dir", `${home}/other`, "service", "install"], {
        home,
        env: { XDG_CONFIG_HOME: cfg },
      });
      assert.match(other.stdout, new RegExp(`^Updated ${file}:`));
      assert.match(
        other.stdout,
        /Start it: systemctl --user daemon-reload && .*restart wats\.service/,
      );
      assert.match(
        (await run(["status"])).stdout,
        /differs from what `wats service install` would write/,
      );

      // As `systemctl --user enable` leaves it.
      await Deno.mkdir(`${unitDir}/default.target.wants`);
      await Deno.symlink(file, `${unitDir}/default.target.wants/${SYSTEMD_UNIT}`);
      const removed = await run(["uninstall"]);
      assert.equal(removed.code, 0, removed.stderr);
      assert.match(removed.stdout, new RegExp(`Removed ${file}\n`));
      // (systemctl may remove the link itself, and its empty folder, even with no user manager.)
      const left = (dir: string): string[] =>
        [...Deno.readDirSync(dir)].flatMap((e) =>
          e.isDirectory ? left(`${dir}/${e.name}`) : [`${dir}/${e.name}`]
        );
      assert.deepEqual(left(unitDir), []);

      const twice = await run(["uninstall"]);
      assert.equal(twice.code, 0, twice.stderr);
      assert.equal(twice.stdout, `Not installed (no ${file}); nothing to do.\n`);
      assert.match((await run(["status"])).stdout, /^Not installed: no .* wats service install\n$/);
    } finally {
      await Deno.remove(home, { recursive: true });
    }
  },
});

/** A service world that records the manager's invocations and answers from `answers`. */
function fakeWorld(answers: Record<string, CommandOutput> = {}) {
  const calls: string[] = [];
  const lines: string[] = [];
  const warnings: string[] = [];
  const world: ServiceWorld = {
    run: (program, args) => {
      const line = [program, ...args].join(" ");
      calls.push(line);
      return Promise.resolve(answers[line] ?? { code: 1, stdout: "", stderr: "not loaded" });
    },
    out: (l) => lines.push(l),
    warn: (l) => warnings.push(l),
    uid: () => 501,
  };
  return { world, calls, lines, warnings };
}

function context(os: string, home: string, words: string[]): CommandContext {
  return {
    argv: [],
    words,
    paths: dataPaths(`${home}/data & <more>`),
    env: { HOME: home, PATH: "/opt/homebrew/bin:/usr/bin:/bin" },
    cwd: home,
    os,
    user: "maria",
    self: ["/Users/maria/.local/bin/wats"],
    stdinIsTerminal: false,
    stdoutIsTerminal: false,
    verbose: false,
    signal: new AbortController().signal,
  };
}

Deno.test("on systemd, uninstall stops and disables the unit, then reloads; status asks systemd", async () => {
  const home = await Deno.makeTempDir({ prefix: "wats-service-" });
  try {
    const { world, calls, lines } = fakeWorld({
      "systemctl --user disable --now wats.service": { code: 0, stdout: "", stderr: "" },
      "systemctl --user daemon-reload": { code: 0, stdout: "", stderr: "" },
      "systemctl --user is-active wats.service": { code: 0, stdout: "active\n", stderr: "" },
      "systemctl --user is-enabled wats.service": { code: 0, stdout: "enabled\n", stderr: "" },
    });
    assert.equal(await serviceCommand(context("linux", home, ["service", "install"]), world), 0);
    assert.deepEqual(calls, [], "install runs nothing");
    assert.equal(await serviceCommand(context("linux", home, ["service", "status"]), world), 0);
    assert.equal(lines.at(-1), "systemd: active, enabled");
    await serviceCommand(context("linux", home, ["service", "uninstall"]), world);
    assert.deepEqual(calls.slice(2), [
      "systemctl --user disable --now wats.service",
      "systemctl --user daemon-reload",
    ]);
    assert.ok(lines.includes("Stopped and disabled wats.service."));
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("install leaves relative and empty PATH entries out of the unit and says so", async () => {
  const home = await Deno.makeTempDir({ prefix: "wats-service-" });
  try {
    const ctx = context("linux", home, ["service", "install"]);
    const { world, lines } = fakeWorld();
    const unsafe = { ...ctx, env: { ...ctx.env, PATH: ".:/usr/local/bin::bin:/usr/bin:/bin:" } };
    assert.equal(await serviceCommand(unsafe, world), 0);
    const unit = await Deno.readTextFile(`${home}/.config/systemd/user/${SYSTEMD_UNIT}`);
    assert.deepEqual(unit.split("\n").filter((l) => l.startsWith("Environment")), [
      'Environment="PATH=/usr/local/bin:/usr/bin:/bin"',
      `EnvironmentFile=-${ctx.paths.dataDir}/service.env`,
    ]);
    assert.ok(
      lines.includes(
        'PATH: left out ".", "", "bin", "" (relative or empty entries would run programs ' +
          "from the service's working directory; the node_modules/.bin folders npx adds would " +
          "run whatever was planted there)",
      ),
      lines.join("\n"),
    );
    // A clean PATH is copied as it is, with nothing said about it.
    assert.deepEqual(trustedPath("/opt/homebrew/bin:/usr/bin", home), {
      path: "/opt/homebrew/bin:/usr/bin",
      dropped: [],
    });
    const { world: w2, lines: l2 } = fakeWorld();
    await serviceCommand(ctx, w2);
    assert.ok(!l2.some((l) => l.startsWith("PATH:")), l2.join("\n"));
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("install leaves out the node_modules/.bin folders npx put on PATH around the checkout, and what the launcher left out", async () => {
  const home = await Deno.makeTempDir({ prefix: "wats-service-" });
  try {
    const ctx = context("linux", home, ["service", "install"]);
    const { world, lines } = fakeWorld();
    const checkout = `${home}/src/wats`;
    const npx = [
      `${checkout}/node_modules/.bin`,
      `${home}/src/node_modules/.bin`,
      `${home}/node_modules/.bin`,
      "/node_modules/.bin",
      `${home}/.npm/_npx/9f2c/node_modules/.bin`,
    ];
    const unsafe = {
      ...ctx,
      cwd: checkout,
      droppedPath: ["."],
      env: { ...ctx.env, PATH: [...npx, "/opt/tools/node_modules/.bin", "/usr/bin"].join(":") },
    };
    assert.equal(await serviceCommand(unsafe, world), 0);
    const unit = await Deno.readTextFile(`${home}/.config/systemd/user/${SYSTEMD_UNIT}`);
    // A node_modules/.bin the person put on PATH away from the checkout stays.
    assert.ok(unit.includes('Environment="PATH=/opt/tools/node_modules/.bin:/usr/bin"'), unit);
    assert.ok(!unit.includes(`${home}/node_modules`), unit);
    const said = lines.find((l) => l.startsWith("PATH: left out"));
    assert.ok(
      said?.startsWith(`PATH: left out ".", ${npx.map((e) => JSON.stringify(e)).join(", ")} (`),
      said,
    );
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("an env file is KEY=value lines; a line that is not says where", () => {
  assert.deepEqual(
    parseEnvFile("# keys\nexport CODEX_KEY=\"sk-1 2\"\n\nB='x'\nC=a=b\n", "/d/service.env"),
    { CODEX_KEY: "sk-1 2", B: "x", C: "a=b" },
  );
  assert.throws(
    () => parseEnvFile("A=1\nnot a pair\n", "/d/service.env"),
    (e: Error) =>
      e.message ===
        "/d/service.env:2 is not KEY=value: fix or remove the line, then run wats service install again",
  );
});

/**
 * Reads the plist XML subset wats writes (dict, key, string, array, true,
 * false, integer), strictly: anything else, or text outside an element, throws.
 */
function readPlist(text: string): unknown {
  const header = '<?xml version="1.0" encoding="UTF-8"?>\n' +
    '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">\n';
  assert.ok(text.startsWith(header), "XML declaration and plist DOCTYPE");
  const body = text.slice(header.length).replace(/<!--(?:(?!--)[\s\S])*-->/g, "");
  const tokens = [...body.matchAll(/<(\/?)([a-z]+)(\s+version="1\.0")?(\/?)>|([^<]+)/g)];
  let i = 0;
  // The token at `k`; past the end the plist was cut short.
  const at = (k: number) => {
    const t = tokens[k];
    assert.ok(t, "the plist ends early");
    return t;
  };
  const unescape = (s: string) => {
    assert.ok(!/&(?!amp;|lt;|gt;)/.test(s), `unescaped & in ${s}`);
    return s.replaceAll("&lt;", "<").replaceAll("&gt;", ">").replaceAll("&amp;", "&");
  };
  const skipSpace = () => {
    while (tokens[i]?.[5]?.trim() === "") i++;
  };
  const textOf = (tag: string): string => {
    let s = "";
    const text = tokens[i]?.[5];
    if (text !== undefined) {
      s = text;
      i++;
    }
    const close = tokens[i++];
    assert.ok(close && close[1] === "/" && close[2] === tag, `</${tag}> expected`);
    return unescape(s);
  };
  const value = (): unknown => {
    skipSpace();
    const t = tokens[i++];
    assert.ok(t && t[1] === "" && t[5] === undefined, `an element expected at token ${i}`);
    const [, , tag, , selfClosing] = t;
    if (selfClosing === "/") {
      assert.ok(tag === "true" || tag === "false", `<${tag}/> is not a plist value`);
      return tag === "true";
    }
    switch (tag) {
      case "string":
        return textOf("string");
      case "integer": {
        const n = textOf("integer");
        assert.match(n, /^-?\d+$/);
        return Number(n);
      }
      case "array": {
        const out: unknown[] = [];
        for (;;) {
          skipSpace();
          if (at(i)[1] === "/") break;
          out.push(value());
        }
        assert.equal(at(i++)[2], "array");
        return out;
      }
      case "dict": {
        const out: Record<string, unknown> = {};
        for (;;) {
          skipSpace();
          if (at(i)[1] === "/") break;
          const k = at(i++);
          assert.equal(k[2], "key", "a dict holds key, value pairs");
          const key = textOf("key");
          assert.ok(!(key in out), `duplicate key ${key}`);
          out[key] = value();
        }
        assert.equal(at(i++)[2], "dict");
        return out;
      }
      default:
        throw new Error(`<${tag}> is not in the plist subset`);
    }
  };
  skipSpace();
  const open = at(i++);
  assert.ok(open[2] === "plist" && open[3] !== undefined, '<plist version="1.0">');
  const root = value();
  skipSpace();
  assert.equal(at(i++)[2], "plist");
  skipSpace();
  assert.equal(i, tokens.length, "nothing after </plist>");
  return root;
}

/** launchd.plist(5): the keys wats uses and their types; no other key. */
function checkLaunchdKeys(plist: unknown): void {
  const p = plist as Record<string, unknown>;
  const types: Record<string, string> = {
    Label: "string",
    ProgramArguments: "string[]",
    EnvironmentVariables: "dict of string",
    RunAtLoad: "boolean",
    KeepAlive: "dict of boolean",
    StandardOutPath: "string",
    StandardErrorPath: "string",
  };
  for (const [k, v] of Object.entries(p)) {
    const want = types[k];
    assert.ok(want !== undefined, `${k} is not a key wats writes`);
    const ok = want === "string"
      ? typeof v === "string"
      : want === "boolean"
      ? typeof v === "boolean"
      : want === "string[]"
      ? Array.isArray(v) && v.every((x) => typeof x === "string")
      : typeof v === "object" && v !== null && !Array.isArray(v) &&
        Object.values(v).every((x) =>
          typeof x === (want === "dict of string" ? "string" : "boolean")
        );
    assert.ok(ok, `${k} must be ${want}`);
  }
  for (const k of ["Label", "ProgramArguments"]) assert.ok(k in p, `${k} is required`);
}

Deno.test("the plist reader refuses what is not a plist", () => {
  const good = launchdPlist({ self: ["/bin/wats"], dataDir: "/d" }, "/d/wats.log");
  readPlist(good);
  assert.throws(() => readPlist(good.replace("<true/>", "<yes/>")), /not a plist value/);
  assert.throws(() => readPlist(good.replace("<string>/d</string>", "<string>a & b</string>")));
  assert.throws(() => readPlist(good.replace("</dict>\n</plist>", "</plist>")));
  assert.throws(() => checkLaunchdKeys({ Label: "x", ProgramArguments: ["a"], RunAtLoad: "yes" }));
});

Deno.test("`wats service install` on macOS writes a launchd agent that runs wats with this data dir", async () => {
  const home = await Deno.makeTempDir({ prefix: "wats-service-" });
  try {
    const ctx = context("darwin", home, ["service", "install"]);
    await Deno.mkdir(ctx.paths.dataDir);
    const { world, calls, lines } = fakeWorld();
    assert.equal(await serviceCommand(ctx, world), 0);
    const file = `${home}/Library/LaunchAgents/${LAUNCHD_LABEL}.plist`;
    const text = await Deno.readTextFile(file);
    assert.equal(lines[0], `Wrote ${file}:`);
    assert.ok(lines.includes(text));
    assert.ok(lines.includes(`Start it: launchctl bootstrap gui/$(id -u) ${file}`));
    assert.deepEqual(calls, []);

    const log = `${ctx.paths.dataDir}/wats.log`;
    assert.ok(Deno.statSync(log).isFile, "the log file exists for launchd to append to");
    const plist = readPlist(text);
    checkLaunchdKeys(plist);
    assert.deepEqual(plist, {
      Label: LAUNCHD_LABEL,
      ProgramArguments: serviceArgs({ self: ctx.self, dataDir: ctx.paths.dataDir }),
      EnvironmentVariables: { PATH: "/opt/homebrew/bin:/usr/bin:/bin" },
      RunAtLoad: true,
      KeepAlive: { SuccessfulExit: false },
      StandardOutPath: log,
      StandardErrorPath: log,
    });
    if (await hasPlutil()) {
      const r = await new Deno.Command("plutil", { args: ["-lint", file] }).output();
      assert.equal(r.code, 0);
    }
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("on macOS, install copies service.env into the plist, which only its owner can read", async () => {
  const home = await Deno.makeTempDir({ prefix: "wats-service-" });
  try {
    const ctx = context("darwin", home, ["service", "install"]);
    await Deno.mkdir(ctx.paths.dataDir);
    const envFile = `${ctx.paths.dataDir}/service.env`;
    await Deno.writeTextFile(envFile, "# for codex\nexport CODEX_KEY=sk-<1>&2\n");
    const { world, lines } = fakeWorld();
    assert.equal(await serviceCommand(ctx, world), 0);
    const file = `${home}/Library/LaunchAgents/${LAUNCHD_LABEL}.plist`;
    const plist = readPlist(await Deno.readTextFile(file)) as Record<string, unknown>;
    checkLaunchdKeys(plist);
    assert.deepEqual(plist.EnvironmentVariables, {
      CODEX_KEY: "sk-<1>&2",
      PATH: "/opt/homebrew/bin:/usr/bin:/bin",
    });
    assert.equal(Deno.statSync(file).mode! & 0o777, 0o600);
    assert.ok(
      lines.includes(
        `Environment: CODEX_KEY copied from ${envFile} into the plist; ` +
          "run wats service install again after editing it",
      ),
      lines.join("\n"),
    );
    // status compares with what install would write now, env file included.
    const status = fakeWorld();
    await serviceCommand(context("darwin", home, ["service", "status"]), status.world);
    assert.equal(status.lines[0], `Installed: ${file} (up to date)`);
    await Deno.writeTextFile(envFile, "CODEX_KEY=sk-2\n");
    const changed = fakeWorld();
    await serviceCommand(context("darwin", home, ["service", "status"]), changed.world);
    assert.match(changed.lines[0]!, /differs from what `wats service install` would write now/);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

async function hasPlutil(): Promise<boolean> {
  try {
    await new Deno.Command("plutil", { args: ["-help"], stdout: "null", stderr: "null" }).output();
    return true;
  } catch {
    return false;
  }
}

Deno.test("on macOS, uninstall boots the agent out of gui/<uid> and removes it; twice is fine", async () => {
  const home = await Deno.makeTempDir({ prefix: "wats-service-" });
  try {
    const ctx = (sub: string) => context("darwin", home, ["service", sub]);
    await Deno.mkdir(ctx("install").paths.dataDir);
    const { world, calls, lines } = fakeWorld({
      [`launchctl bootout gui/501/${LAUNCHD_LABEL}`]: { code: 0, stdout: "", stderr: "" },
      [`launchctl print gui/501/${LAUNCHD_LABEL}`]: {
        code: 0,
        stdout: `gui/501/${LAUNCHD_LABEL} = {\n\tactive count = 1\n\tstate = running\n}\n`,
        stderr: "",
      },
    });
    await serviceCommand(ctx("install"), world);
    await serviceCommand(ctx("status"), world);
    assert.equal(lines.at(-1), `launchd: gui/501/${LAUNCHD_LABEL} running`);
    await serviceCommand(ctx("uninstall"), world);
    assert.deepEqual(calls, [
      `launchctl print gui/501/${LAUNCHD_LABEL}`,
      `launchctl bootout gui/501/${LAUNCHD_LABEL}`,
    ]);
    const file = `${home}/Library/LaunchAgents/${LAUNCHD_LABEL}.plist`;
    assert.ok(lines.includes(`Removed ${file}`));
    assert.deepEqual([...Deno.readDirSync(`${home}/Library/LaunchAgents`)], []);
    await serviceCommand(ctx("uninstall"), world);
    assert.equal(lines.at(-1), `Not installed (no ${file}); nothing to do.`);
    assert.equal(calls.length, 2, "nothing to stop the second time");
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("on macOS, install before the data directory exists says what to run first", async () => {
  const home = await Deno.makeTempDir({ prefix: "wats-service-" });
  try {
    const { world } = fakeWorld();
    await assert.rejects(
      serviceCommand(context("darwin", home, ["service", "install"]), world),
      /the data directory .* does not exist yet: run `wats` once/,
    );
    assert.throws(() => Deno.statSync(`${home}/Library`), Deno.errors.NotFound);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("wats service on another OS says which managers it knows", async () => {
  const { world } = fakeWorld();
  await assert.rejects(
    serviceCommand(context("windows", "/h", ["service", "install"]), world),
    /wats service knows systemd \(Linux\) and launchd \(macOS\), not windows/,
  );
});

Deno.test("`wats --help` lists the service commands and `wats service` explains them", async () => {
  const help = await runWats(["--help"]);
  assert.match(help.stdout, /wats service install\|uninstall\|status/);
  const bare = await runWats(["service"]);
  assert.equal(bare.code, 2);
  assert.match(bare.stderr, /^Usage: wats service install \| uninstall \| status/);
  const asked = await runWats(["service", "install", "--help"]);
  assert.equal(asked.code, 0);
  assert.match(asked.stdout, /^Usage: wats service/);
});

Deno.test("install from a Deno in npx's cache warns, once, on stderr, and says how to get a path that stays", async () => {
  const home = await Deno.makeTempDir({ prefix: "wats-service-" });
  try {
    const deno = `${home}/.npm/_npx/6a2b9c/node_modules/deno/bin/deno`;
    const ctx = {
      ...context("linux", home, ["service", "install"]),
      self: [deno, "run", "main.ts"],
    };
    const { world, warnings } = fakeWorld();
    assert.equal(await serviceCommand(ctx, world), 0);
    assert.deepEqual(warnings, [
      `warning: ${deno} is in npx's cache, which npm may delete, and the service with it: ` +
      "install Deno (npm i -g deno@2.9.6) or use the compiled wats binary, then run this again",
    ]);
    const stable = fakeWorld();
    await serviceCommand(context("linux", home, ["service", "install"]), stable.world);
    assert.deepEqual(stable.warnings, []);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});
