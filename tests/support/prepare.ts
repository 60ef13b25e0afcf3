/**
 * Installs the pinned programs the end-to-end tests drive (see
 * {@linkcode PINNED_CLIS} in clis.ts) into `.cache/clis/` with `npm ci` from
 * their committed lock ({@linkcode CLIS_LOCK_DIR}), and the Node helper
 * folders ({@linkcode NODE_HELPERS}: `npm ci` in each, from its lock file), and
 * the Debian tools some tests run (debian_tools.ts: apt-get, only when missing).
 * `deno task test` runs this before `deno test`.
 *
 * Idempotent: a stamp file holds the pins and the lock installed from; when it
 * matches them and every program is at its pinned version, nothing is done. In CI
 * (`CI=true`) any failure exits 1; locally it warns and exits 0, and the tests
 * that need the missing program are skipped with a printed reason.
 *
 * Run: `deno run --allow-all tests/support/prepare.ts`
 *
 * @module
 */

import {
  cliCommand,
  cliCwd,
  type CliName,
  cliPath,
  cliProblem,
  CLIS_DIR,
  CLIS_LOCK_DIR,
  clisStamp,
  isCi,
  LATEST,
  NODE_HELPERS,
  nodeHelperManifest,
  type NodeHelperName,
  nodeHelperProblem,
  nodeHelperStamp,
  nodeOf,
  PINNED_CLIS,
  type PinnedCli,
  pinSpecs,
  stampFile,
} from "./clis.ts";
import { prepareDebianTools } from "./debian_tools.ts";

/** What one command printed and how it ended. */
interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

async function run(
  cmd: string[],
  opts: { cwd?: string; timeoutMs: number; env?: Record<string, string> },
): Promise<Ran> {
  const [program, ...args] = cmd;
  if (program === undefined) {
    throw new Error("error: no command to run: pass the program and its arguments");
  }
  const out = await new Deno.Command(program, {
    args,
    cwd: opts.cwd,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    env: { CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1", ...opts.env },
    signal: AbortSignal.timeout(opts.timeoutMs),
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

function readStamp(dir: string): string | null {
  try {
    return Deno.readTextFileSync(stampFile(dir));
  } catch {
    return null;
  }
}

/** Runs a program's probe; returns why it failed, or null when it worked. */
async function probe(name: CliName, dir: string): Promise<string | null> {
  const problem = cliProblem(name, dir);
  if (problem !== null) return problem;
  const c: PinnedCli = PINNED_CLIS[name];
  const shown = `"${cliPath(name, dir)} ${c.probe.join(" ")}"`;
  try {
    const r = await run([...cliCommand(name, dir), ...c.probe], {
      cwd: cliCwd(name, dir),
      timeoutMs: 60_000,
    });
    if (r.code === 0) return null;
    return `${shown} exited ${r.code}: ${(r.stderr || r.stdout).trim().slice(0, 400)}`;
  } catch (err) {
    return `${shown} could not run: ${(err as Error).message}`;
  }
}

/**
 * Claude Code's package ships a stub `bin/claude.exe` that its postinstall
 * replaces with the native binary; if scripts were skipped the stub stays.
 */
async function repairClaude(dir: string): Promise<void> {
  const pkgDir = `${dir}/node_modules/${PINNED_CLIS.claude.pkg}`;
  try {
    Deno.statSync(`${pkgDir}/install.cjs`);
  } catch {
    return;
  }
  console.log("prepare: claude binary did not run; running its install.cjs");
  const r = await run(["node", "install.cjs"], { cwd: pkgDir, timeoutMs: 120_000 });
  if (r.code !== 0) console.warn(`prepare: node install.cjs exited ${r.code}: ${r.stderr.trim()}`);
}

/**
 * `npm ci` into `dir` from the committed package.json and lock
 * ({@linkcode CLIS_LOCK_DIR}): every transitive dependency at the version and
 * integrity the lock names, and a lock that disagrees with package.json fails
 * instead of being rewritten.
 */
async function install(dir: string): Promise<void> {
  Deno.mkdirSync(dir, { recursive: true });
  for (const file of ["package.json", "package-lock.json"]) {
    Deno.copyFileSync(`${CLIS_LOCK_DIR}/${file}`, `${dir}/${file}`);
  }
  try {
    Deno.removeSync(stampFile(dir));
  } catch {
    // Not there yet.
  }
  console.log(`prepare: npm ci ${pinSpecs().join(" ")} (into ${dir}, from ${CLIS_LOCK_DIR})`);
  const started = performance.now();
  const r = await run(["npm", "ci", "--no-audit", "--no-fund"], {
    cwd: dir,
    timeoutMs: 20 * 60_000,
  });
  const secs = ((performance.now() - started) / 1000).toFixed(1);
  if (r.code !== 0) {
    throw new Error(`npm ci exited ${r.code} after ${secs} s:\n${r.stderr.trim().slice(-2000)}`);
  }
  console.log(`prepare: npm ci finished in ${secs} s`);
}

/**
 * Where node-gyp finds the headers of the Node that runs the helpers: the
 * install prefix of `node` when it holds `include/node/node.h` of the same
 * version (Debian's `nodejs` ships them in /usr/include/node). Undefined when
 * it does not, or when npm is already told (`npm_config_nodedir`). Without it,
 * node-gyp downloads the headers, which fails with no route to them; this
 * machine's ~/.npmrc says `nodedir`, a fresh HOME does not.
 */
export async function nodeHeadersDir(): Promise<string | undefined> {
  if (Deno.env.get("npm_config_nodedir") !== undefined) return undefined;
  const r = await run(["node", "-p", "process.execPath + ' ' + process.version"], {
    timeoutMs: 60_000,
  }).catch(() => undefined);
  if (r?.code !== 0) return undefined;
  const [execPath, version] = r.stdout.trim().split(" ");
  if (execPath === undefined || version === undefined) return undefined;
  const prefix = Deno.realPathSync(execPath).replace(/\/bin\/[^/]+$/, "");
  try {
    const h = Deno.readTextFileSync(`${prefix}/include/node/node_version.h`);
    const part = (name: string) => new RegExp(`#define NODE_${name}_VERSION (\\d+)`).exec(h)?.[1];
    const headers = `v${part("MAJOR")}.${part("MINOR")}.${part("PATCH")}`;
    return headers === version ? prefix : undefined;
  } catch {
    return undefined;
  }
}

/**
 * `npm ci` in a Node helper's folder (exact versions from its lock file), then its
 * probe. Returns why it failed, or null when the helper is ready.
 */
async function prepareNodeHelper(name: NodeHelperName): Promise<string | null> {
  if (nodeHelperProblem(name) === null) return null;
  const h = NODE_HELPERS[name];
  console.log(`prepare: npm ci in ${h.dir}`);
  const started = performance.now();
  // better-sqlite3 may compile its addon here (a couple of minutes on 2 cores).
  const nodedir = await nodeHeadersDir();
  const r = await run(["npm", "ci", "--no-audit", "--no-fund"], {
    cwd: h.dir,
    timeoutMs: 20 * 60_000,
    env: nodedir !== undefined ? { npm_config_nodedir: nodedir } : {},
  });
  const secs = ((performance.now() - started) / 1000).toFixed(1);
  if (r.code !== 0) {
    return `npm ci exited ${r.code} after ${secs} s: ${r.stderr.trim().slice(-2000)}`;
  }
  const p = await run([nodeOf(name), "-e", h.probe], { cwd: h.dir, timeoutMs: 60_000 });
  if (p.code !== 0) {
    return `installed, but its packages do not load: ${
      (p.stderr || p.stdout).trim().slice(0, 800)
    }`;
  }
  Deno.writeTextFileSync(nodeHelperStamp(name), nodeHelperManifest(name));
  console.log(`prepare: ${name} helper ready (${secs} s)`);
  return null;
}

async function main(): Promise<number> {
  const cliCode = await prepareClis();
  const problems: string[] = [];
  for (const name of Object.keys(NODE_HELPERS) as NodeHelperName[]) {
    const p = await prepareNodeHelper(name);
    if (p !== null) problems.push(`${name}: ${p}`);
  }
  // shellcheck, systemd-analyze, python3-yaml (tests/support/debian_tools.ts).
  problems.push(...await prepareDebianTools());
  if (problems.length === 0) return cliCode;
  const message = `Test tools not ready:\n  ${problems.join("\n  ")}`;
  if (isCi()) {
    console.error(`error: prepare: ${message}`);
    return 1;
  }
  console.warn(`warning: prepare: ${message}\nThe tests that need them will be skipped.`);
  return cliCode;
}

/**
 * Installs the pinned programs into `dir` (default `.cache/clis/`) unless its
 * stamp says they are already there from the same pins and lock; returns the
 * exit code (1 only in CI). A test may pass a throwaway `dir`.
 */
export async function prepareClis(dir: string = CLIS_DIR): Promise<number> {
  const ci = isCi();
  const names = Object.keys(PINNED_CLIS) as CliName[];
  const stamp = clisStamp();
  const upToDate = readStamp(dir) === stamp && names.every((n) => cliProblem(n, dir) === null);
  const fail = (message: string): number => {
    if (ci) {
      console.error(`error: prepare: ${message}`);
      return 1;
    }
    console.warn(
      `warning: prepare: ${message}\nThe tests that need these programs will be skipped.`,
    );
    return 0;
  };

  if (upToDate) return 0;

  try {
    if (LATEST && dir === CLIS_DIR) await installLatest(dir);
    else await install(dir);
  } catch (err) {
    return fail(`could not install the pinned CLIs: ${(err as Error).message}`);
  }

  if (await probe("claude", dir) !== null) await repairClaude(dir);
  const problems: string[] = [];
  for (const n of names) {
    const p = await probe(n, dir);
    if (p !== null) problems.push(`${n}: ${p}`);
  }
  if (problems.length > 0) return fail(`installed but not working:\n  ${problems.join("\n  ")}`);

  if (LATEST && dir === CLIS_DIR) {
    console.log(`prepare: ready, newest releases: ${installedSpecs(dir).join(", ")}`);
    return 0;
  }
  Deno.writeTextFileSync(stampFile(dir), stamp);
  console.log(`prepare: ready: ${pinSpecs().join(", ")}`);
  return 0;
}

/**
 * `npm install` of each program's `latest` release into `dir`, every time (npm answers quickly
 * when nothing changed): no lock, since the point is to meet what users get today.
 */
async function installLatest(dir: string): Promise<void> {
  Deno.mkdirSync(dir, { recursive: true });
  const specs = Object.values(PINNED_CLIS as Record<string, PinnedCli>).map((c) =>
    `${c.pkg}@latest`
  );
  console.log(`prepare: npm install ${specs.join(" ")} (into ${dir})`);
  const r = await run(
    ["npm", "install", "--no-save", "--no-audit", "--no-fund", "--prefix", dir, ...specs],
    { cwd: dir, timeoutMs: 20 * 60_000 },
  );
  if (r.code !== 0) {
    throw new Error(`npm install exited ${r.code}: ${r.stderr.trim().slice(-2000)}`);
  }
}

/** `pkg@version` of what is installed in `dir`, for the log. */
function installedSpecs(dir: string): string[] {
  return Object.values(PINNED_CLIS as Record<string, PinnedCli>).map((c) => {
    try {
      const v = JSON.parse(Deno.readTextFileSync(`${dir}/node_modules/${c.pkg}/package.json`));
      return `${c.pkg}@${v.version}`;
    } catch {
      return `${c.pkg}@?`;
    }
  });
}

if (import.meta.main) {
  Deno.exit(await main());
}
