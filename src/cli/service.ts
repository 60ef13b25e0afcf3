/**
 * `wats service install|uninstall|status`: keeps the node running as the user's
 * own service, never root's: a systemd user unit on Linux
 * (`~/.config/systemd/user/wats.service`, logs in the journal) and a launchd
 * agent on macOS (`~/Library/LaunchAgents/local.wats.node.plist`, logs in
 * `<data>/wats.log`). Both run this very program (`ctx.self`: the binary, or
 * `deno run … main.ts` from source) with the data directory in effect now.
 *
 * The service gets PATH as it is now without the entries `trustedPath` (src/cli/context.ts)
 * leaves out: relative and empty ones (they would resolve against the service's working
 * directory, $HOME: `.` would make `$HOME/git` the daemon's git), and the `node_modules/.bin`
 * folders npx put there for the folders around where install ran; and the variables of `<data dir>/service.env` (`KEY=value` lines, e.g. the
 * API key `agent.codex_env_key` names): systemd reads that file at each start
 * (`EnvironmentFile=`); launchd has no such key, so install copies it into the plist's
 * `EnvironmentVariables` and writes the plist readable by its owner only.
 *
 * `install` only writes the file and prints the one command that starts it;
 * `uninstall` stops the service through the manager when it can be reached and
 * removes the files; `status` says what is installed and what the manager
 * reports. All three are idempotent.
 *
 * @module
 */

import { HarnessError, UsageError, WatsError } from "../errors.ts";
import { type CommandRunner, runCommand } from "../runner/spawn.ts";
import { type CommandContext, trustedPath } from "./context.ts";
import { SERVICE_HELP } from "./help.ts";
import { npxCacheWarning } from "./npx_cache.ts";
import { commandName, refuseArguments } from "./usage.ts";
import { print, printErr } from "./output.ts";

/** The systemd unit's name. */
export const SYSTEMD_UNIT = "wats.service";
/** The launchd agent's label (reverse-DNS; `local.` because wats owns no domain). */
export const LAUNCHD_LABEL = "local.wats.node";
/** The macOS log file, in the data directory. */
export const LAUNCHD_LOG = "wats.log";
/** The service's environment file, in the data directory (docs/getting-started.md). */
export const SERVICE_ENV = "service.env";

/** Where the service's files go, and which manager runs it. */
export interface ServiceLayout {
  manager: "systemd" | "launchd";
  /** The program `status` and `uninstall` ask: `systemctl` or `launchctl`. */
  program: string;
  /** The unit file or the plist. */
  file: string;
  /** The folder that holds it (created by install when missing). */
  dir: string;
  /** systemd: the link `systemctl enable` makes; uninstall removes it if still there. */
  enableLink?: string;
  /** launchd: the log file, created by install so launchd can append to it. */
  log?: string;
}

/**
 * The layout for `os`, from the environment: systemd's user unit folder is
 * `$XDG_CONFIG_HOME/systemd/user` (else `~/.config/systemd/user`); launchd's per-user
 * agents live in `~/Library/LaunchAgents`.
 */
export function serviceLayout(
  os: string,
  env: Record<string, string>,
  dataDir: string,
): ServiceLayout {
  const home = env.HOME;
  if (!home) {
    throw new WatsError("service.no_home", "HOME is not set: cannot find your service folder");
  }
  if (os === "darwin") {
    const dir = `${home}/Library/LaunchAgents`;
    return {
      manager: "launchd",
      program: "launchctl",
      dir,
      file: `${dir}/${LAUNCHD_LABEL}.plist`,
      log: `${dataDir}/${LAUNCHD_LOG}`,
    };
  }
  if (os === "linux") {
    const config = env.XDG_CONFIG_HOME || `${home}/.config`;
    const dir = `${config}/systemd/user`;
    return {
      manager: "systemd",
      program: "systemctl",
      dir,
      file: `${dir}/${SYSTEMD_UNIT}`,
      enableLink: `${dir}/default.target.wants/${SYSTEMD_UNIT}`,
    };
  }
  throw new WatsError(
    "service.unsupported_os",
    `wats service knows systemd (Linux) and launchd (macOS), not ${os}: run \`wats\` under your own supervisor`,
  );
}

/** What the service runs. */
export interface ServiceSpec {
  /** The program and its leading arguments (`ctx.self`). */
  self: string[];
  dataDir: string;
  /** PATH for the node, so it finds `claude`, `codex`, `git` as your shell does (absolute entries only). */
  path?: string;
  /** `<data dir>/service.env`, which systemd reads at each start (`servicePlan` sets it). */
  envFile?: string;
  /** launchd: the variables of the env file, copied into the plist at install. */
  envVars?: Record<string, string>;
}

/**
 * Reads an environment file: `KEY=value` lines; blank lines and `#` comments skipped, `export `
 * and one pair of surrounding quotes allowed (the subset systemd's `EnvironmentFile=` and a shell
 * read alike).
 *
 * @throws {WatsError} code `service.bad_env_file` naming the line that is not `KEY=value`.
 */
export function parseEnvFile(text: string, file: string): Record<string, string> {
  const out: Record<string, string> = {};
  text.split("\n").forEach((raw, i) => {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) return;
    const m = line.replace(/^export\s+/, "").match(/^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/);
    if (!m) {
      throw new WatsError(
        "service.bad_env_file",
        `${file}:${
          i + 1
        } is not KEY=value: fix or remove the line, then run wats service install again`,
      );
    }
    const v = m[2]!;
    out[m[1]!] = /^(["']).*\1$/.test(v) && v.length >= 2 ? v.slice(1, -1) : v;
  });
  return out;
}

/** The command line the service runs: this program, the data directory, the daemon. */
export function serviceArgs(spec: ServiceSpec): string[] {
  return [...spec.self, "--data-dir", spec.dataDir];
}

/**
 * Quotes one word for a systemd unit: double quotes with C-style escapes and `%`
 * doubled (specifiers); in an ExecStart argument also `$` doubled (variable
 * expansion, which does not apply to the program path). A `path` (`EnvironmentFile=`) takes no
 * quotes (systemd reads them as part of the path, which is then not absolute): only `%` doubled.
 * systemd.syntax(7), systemd.service(5) "Command lines", systemd.exec(5).
 */
export function systemdQuote(
  word: string,
  kind: "program" | "argument" | "value" | "path",
): string {
  if (/[\n\r\0]/.test(word)) {
    throw new WatsError(
      "service.bad_path",
      `cannot put a line break in a systemd unit: ${JSON.stringify(word)}`,
    );
  }
  if (kind === "path") return word.replaceAll("%", "%%");
  let q = word.replaceAll("\\", "\\\\").replaceAll('"', '\\"').replaceAll("%", "%%");
  if (kind === "argument") q = q.replaceAll("$", "$$$$");
  return `"${q}"`;
}

/** The systemd user unit (systemd.unit(5), systemd.service(5)). */
export function systemdUnit(spec: ServiceSpec): string {
  const exec = serviceArgs(spec).map((w, i) => systemdQuote(w, i === 0 ? "program" : "argument"))
    .join(" ");
  const lines = [
    "# Written by `wats service install`; `wats service uninstall` removes it.",
    "[Unit]",
    "Description=wats node (WeAreTheSwarm)",
    "",
    "[Service]",
    "Type=exec",
    `ExecStart=${exec}`,
    ...(spec.path ? [`Environment=${systemdQuote(`PATH=${spec.path}`, "value")}`] : []),
    // `-`: no file is fine; it is read at each start, so editing it needs a restart only.
    ...(spec.envFile ? [`EnvironmentFile=-${systemdQuote(spec.envFile, "path")}`] : []),
    "Restart=on-failure",
    "RestartSec=5s",
    // The node closes its store and socket on SIGTERM; give a run time to end.
    "TimeoutStopSec=30s",
    "",
    "[Install]",
    "WantedBy=default.target",
    "",
  ];
  return lines.join("\n");
}

/** Escapes text for an XML element. */
function xml(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
}

/** The launchd agent (launchd.plist(5)): runs at login, restarted unless it exits 0. */
export function launchdPlist(spec: ServiceSpec, log: string): string {
  const args = serviceArgs(spec).map((a) => `\t\t<string>${xml(a)}</string>`);
  const vars = { ...spec.envVars, ...(spec.path ? { PATH: spec.path } : {}) };
  const env = Object.keys(vars).length > 0
    ? [
      "\t<key>EnvironmentVariables</key>",
      "\t<dict>",
      ...Object.entries(vars).flatMap(([k, v]) => [
        `\t\t<key>${xml(k)}</key>`,
        `\t\t<string>${xml(v)}</string>`,
      ]),
      "\t</dict>",
    ]
    : [];
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">',
    "<!-- Written by `wats service install`; `wats service uninstall` removes it. -->",
    '<plist version="1.0">',
    "<dict>",
    "\t<key>Label</key>",
    `\t<string>${LAUNCHD_LABEL}</string>`,
    "\t<key>ProgramArguments</key>",
    "\t<array>",
    ...args,
    "\t</array>",
    ...env,
    "\t<key>RunAtLoad</key>",
    "\t<true/>",
    "\t<key>KeepAlive</key>",
    "\t<dict>",
    "\t\t<key>SuccessfulExit</key>",
    "\t\t<false/>",
    "\t</dict>",
    "\t<key>StandardOutPath</key>",
    `\t<string>${xml(log)}</string>`,
    "\t<key>StandardErrorPath</key>",
    `\t<string>${xml(log)}</string>`,
    "</dict>",
    "</plist>",
    "",
  ].join("\n");
}

/** The file install writes for `layout`. */
export function serviceFileText(layout: ServiceLayout, spec: ServiceSpec): string {
  return layout.manager === "systemd" ? systemdUnit(spec) : launchdPlist(spec, layout.log!);
}

/** Quotes a path for the shell command we print. */
function sh(word: string): string {
  return /^[A-Za-z0-9_./:@%+=,-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/** The one command that starts a freshly written (`fresh`) or rewritten service. */
export function startCommand(layout: ServiceLayout, fresh: boolean): string {
  if (layout.manager === "systemd") {
    return fresh
      ? `systemctl --user enable --now ${SYSTEMD_UNIT}`
      : `systemctl --user daemon-reload && systemctl --user enable ${SYSTEMD_UNIT} && systemctl --user restart ${SYSTEMD_UNIT}`;
  }
  const load = `launchctl bootstrap gui/$(id -u) ${sh(layout.file)}`;
  return fresh ? load : `launchctl bootout gui/$(id -u)/${LAUNCHD_LABEL}; ${load}`;
}

/** The world `wats service` touches, injected for tests. */
export interface ServiceWorld {
  run: CommandRunner;
  out(line: string): void;
  /** A warning, on stderr. */
  warn(line: string): void;
  /** The user id (launchd's `gui/<uid>` domain); asked only on macOS. */
  uid(): number;
}

const REAL_WORLD: ServiceWorld = {
  run: runCommand,
  out: (line) => print(line),
  warn: (line) => printErr(line),
  uid: () => Deno.uid() ?? 0,
};

/** The layout and spec for this command line. */
export function servicePlan(
  ctx: Pick<CommandContext, "os" | "env" | "paths" | "self" | "cwd" | "droppedPath">,
): {
  layout: ServiceLayout;
  spec: ServiceSpec;
  /** PATH entries left out, by the launcher and here. */
  droppedPath: string[];
} {
  const layout = serviceLayout(ctx.os, ctx.env, ctx.paths.dataDir);
  // The launcher cleaned PATH already (and says what it left out); cleaning again changes nothing.
  const own = trustedPath(ctx.env.PATH ?? "", ctx.cwd);
  const path = own.path;
  const dropped = [...(ctx.droppedPath ?? []), ...own.dropped];
  const envFile = serviceEnvFile(ctx.paths.dataDir);
  const envText = layout.manager === "launchd" ? readText(envFile) : undefined;
  return {
    layout,
    spec: {
      self: ctx.self,
      dataDir: ctx.paths.dataDir,
      ...(path !== "" ? { path } : {}),
      envFile,
      ...(envText !== undefined ? { envVars: parseEnvFile(envText, envFile) } : {}),
    },
    droppedPath: dropped,
  };
}

/** `<data dir>/service.env`. */
export function serviceEnvFile(dataDir: string): string {
  return `${dataDir}/${SERVICE_ENV}`;
}

/** Runs `wats service …`. */
export async function serviceCommand(
  ctx: CommandContext,
  world: ServiceWorld = REAL_WORLD,
): Promise<number> {
  const sub = ctx.words[1];
  if (ctx.argv.includes("--help") || ctx.argv.includes("-h")) {
    world.out(SERVICE_HELP);
    return 0;
  }
  refuseArguments(commandName(ctx.words), ctx.argv);
  const { layout, spec, droppedPath } = servicePlan(ctx);
  switch (sub) {
    case "install":
      return install(layout, spec, droppedPath, world);
    case "uninstall":
      return await uninstall(layout, world);
    case "status":
      return await status(layout, spec, world);
    default:
      throw new UsageError(`unknown command "wats service ${sub}"\n\n${SERVICE_HELP}`);
  }
}

function readText(path: string): string | undefined {
  try {
    return Deno.readTextFileSync(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return undefined;
    throw err;
  }
}

function install(
  layout: ServiceLayout,
  spec: ServiceSpec,
  droppedPath: readonly string[],
  world: ServiceWorld,
): number {
  const warning = npxCacheWarning(spec.self, "the service");
  if (warning) world.warn(warning);
  const text = serviceFileText(layout, spec);
  const before = readText(layout.file);
  if (layout.log !== undefined) {
    try {
      // launchd appends to it; it must exist before the first start.
      Deno.writeTextFileSync(layout.log, "", { append: true });
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
      throw new WatsError(
        "service.no_data_dir",
        `the data directory ${spec.dataDir} does not exist yet: run \`wats\` once (or \`wats setup claude\`), then install the service`,
        { cause: err },
      );
    }
  }
  if (before === text) {
    world.out(`${layout.file} is already up to date; nothing written`);
    environmentLines(layout, spec, droppedPath).forEach((l) => world.out(l));
    world.out(`Start it (if it is not running): ${startCommand(layout, true)}`);
    return 0;
  }
  // A plist holding the env file's variables (API keys) is for its owner's eyes only.
  const mode = spec.envVars && Object.keys(spec.envVars).length > 0 ? 0o600 : 0o644;
  try {
    Deno.writeTextFileSync(layout.file, text, { mode });
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
    // Its folder is new; the launcher granted the folder itself in that case.
    Deno.mkdirSync(layout.dir, { recursive: true });
    Deno.writeTextFileSync(layout.file, text, { mode });
  }
  // `mode` applies to a new file only.
  Deno.chmodSync(layout.file, mode);
  world.out(`${before === undefined ? "Wrote" : "Updated"} ${layout.file}:`);
  world.out("");
  world.out(text);
  environmentLines(layout, spec, droppedPath).forEach((l) => world.out(l));
  world.out(`Start it: ${startCommand(layout, before === undefined)}`);
  if (layout.manager === "systemd") {
    world.out(
      "It runs while you are logged in; to keep it running after you log out: loginctl enable-linger",
    );
    world.out(`Logs: journalctl --user -u ${SYSTEMD_UNIT}`);
  } else {
    world.out(`Logs: ${layout.log}`);
  }
  return 0;
}

/** What install says about the service's environment: PATH entries left out, the env file. */
function environmentLines(
  layout: ServiceLayout,
  spec: ServiceSpec,
  droppedPath: readonly string[],
): string[] {
  const out: string[] = [];
  if (droppedPath.length > 0) {
    out.push(
      `PATH: left out ${droppedPath.map((e) => JSON.stringify(e)).join(", ")} ` +
        "(relative or empty entries would run programs from the service's working directory; " +
        "the node_modules/.bin folders npx adds would run whatever was planted there)",
    );
  }
  if (layout.manager === "systemd") {
    out.push(
      `Environment: KEY=value lines in ${spec.envFile} reach the node at each start ` +
        "(e.g. the API key agent.codex_env_key names); restart the service after editing it",
    );
  } else {
    const names = Object.keys(spec.envVars ?? {});
    out.push(
      names.length > 0
        ? `Environment: ${names.join(", ")} copied from ${spec.envFile} into the plist; ` +
          "run wats service install again after editing it"
        : `Environment: KEY=value lines in ${spec.envFile} (e.g. the API key ` +
          "agent.codex_env_key names) are copied into the plist by wats service install",
    );
  }
  return out;
}

/** Runs the service manager; a missing program or an unreachable manager is a result, not an error. */
async function ask(world: ServiceWorld, program: string, args: string[]) {
  try {
    return await world.run(program, args);
  } catch (err) {
    if (err instanceof HarnessError) {
      return { code: -1, stdout: "", stderr: `${program} is not on PATH` };
    }
    throw err;
  }
}

function firstLine(text: string): string {
  return text.trim().split("\n")[0] ?? "";
}

/** The last line of an error output: what finally went wrong. */
function lastLine(text: string): string {
  return text.trim().split("\n").at(-1) ?? "";
}

async function uninstall(layout: ServiceLayout, world: ServiceWorld): Promise<number> {
  const present = readText(layout.file) !== undefined;
  if (!present) {
    world.out(`Not installed (no ${layout.file}); nothing to do.`);
    return 0;
  }
  if (layout.manager === "systemd") {
    const r = await ask(world, "systemctl", ["--user", "disable", "--now", SYSTEMD_UNIT]);
    if (r.code === 0) {
      world.out(`Stopped and disabled ${SYSTEMD_UNIT}.`);
    } else {
      world.out(
        `systemctl --user disable --now ${SYSTEMD_UNIT} failed (${
          firstLine(r.stderr)
        }); removing the files anyway`,
      );
    }
    removeIfThere(layout.enableLink!, world);
    removeIfThere(layout.file, world);
    const reload = await ask(world, "systemctl", ["--user", "daemon-reload"]);
    if (reload.code !== 0 && r.code === 0) {
      world.out(`systemctl --user daemon-reload failed: ${lastLine(reload.stderr)}`);
    }
    return 0;
  }
  const target = `gui/${world.uid()}/${LAUNCHD_LABEL}`;
  const r = await ask(world, "launchctl", ["bootout", target]);
  world.out(
    r.code === 0 ? `Stopped ${target}.` : `${target} was not loaded (${firstLine(r.stderr)}).`,
  );
  removeIfThere(layout.file, world);
  return 0;
}

function removeIfThere(path: string, world: ServiceWorld): void {
  try {
    Deno.removeSync(path);
    world.out(`Removed ${path}`);
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
}

async function status(
  layout: ServiceLayout,
  spec: ServiceSpec,
  world: ServiceWorld,
): Promise<number> {
  const text = readText(layout.file);
  if (text === undefined) {
    world.out(`Not installed: no ${layout.file}. Install it with: wats service install`);
    return 0;
  }
  const current = text === serviceFileText(layout, spec);
  world.out(
    `Installed: ${layout.file}` +
      (current
        ? " (up to date)"
        : " (differs from what `wats service install` would write now: run it again to update)"),
  );
  if (layout.manager === "systemd") {
    const active = await ask(world, "systemctl", ["--user", "is-active", SYSTEMD_UNIT]);
    const enabled = await ask(world, "systemctl", ["--user", "is-enabled", SYSTEMD_UNIT]);
    const state = (r: { stdout: string; stderr: string }) =>
      firstLine(r.stdout) || firstLine(r.stderr);
    world.out(`systemd: ${state(active)}, ${state(enabled)}`);
    if (firstLine(active.stdout) !== "active") {
      world.out(`Start it: ${startCommand(layout, true)}`);
    }
    return 0;
  }
  const target = `gui/${world.uid()}/${LAUNCHD_LABEL}`;
  const r = await ask(world, "launchctl", ["print", target]);
  if (r.code !== 0) {
    world.out(`launchd: ${target} is not loaded. Start it: ${startCommand(layout, true)}`);
    return 0;
  }
  const state = r.stdout.match(/^\s*state = (.+)$/m)?.[1] ?? "loaded";
  world.out(`launchd: ${target} ${state}`);
  return 0;
}
