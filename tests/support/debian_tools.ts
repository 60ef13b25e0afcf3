/**
 * Programs from Debian's packages that some tests run: shellcheck (install.sh),
 * systemd-analyze (the `wats service` unit), Python's YAML parser (the
 * workflow files), Chromium (the `wats ui` dashboard in a real browser,
 * tests/ui/browser_test.ts), util-linux `script` (a terminal, tests/support/pty.ts) and
 * bubblewrap (the agents' sandbox, tests/e2e/sandbox_*_test.ts). `prepare.ts` installs the missing ones with apt-get when it
 * runs as root (as CI does); {@linkcode requireTool} then behaves like
 * `requireCli`: in CI a missing program fails the test, locally the test is
 * skipped with a printed reason.
 *
 * @module
 */

import { isCi } from "./clis.ts";

/** One program, the Debian package that ships it, and a command that proves it works. */
export interface DebianTool {
  readonly pkg: string;
  readonly command: readonly string[];
}

/** The tools, by the name tests use. */
export const DEBIAN_TOOLS = {
  shellcheck: { pkg: "shellcheck", command: ["shellcheck", "--version"] },
  "systemd-analyze": { pkg: "systemd", command: ["systemd-analyze", "--version"] },
  "python3-yaml": { pkg: "python3-yaml", command: ["/usr/bin/python3", "-c", "import yaml"] },
  chromium: { pkg: "chromium", command: ["chromium", "--version"] },
  // A pseudo-terminal for a command (tests/support/pty.ts).
  script: { pkg: "bsdutils", command: ["script", "--version"] },
  // The agents' OS sandbox (src/safety/sandbox.ts): proven by running something inside one.
  bwrap: { pkg: "bubblewrap", command: ["bwrap", "--ro-bind", "/", "/", "true"] },
} as const satisfies Record<string, DebianTool>;

/** A tool's name. */
export type ToolName = keyof typeof DEBIAN_TOOLS;

/** Why `name` cannot run here, or null when it can. Requires `--allow-run`. */
export function toolProblem(name: ToolName): string | null {
  const [cmd, ...args] = DEBIAN_TOOLS[name].command;
  try {
    const out = new Deno.Command(cmd, { args, stdout: "null", stderr: "piped" }).outputSync();
    if (out.success) return null;
    return `"${DEBIAN_TOOLS[name].command.join(" ")}" exited ${out.code}: ${
      new TextDecoder().decode(out.stderr).trim().slice(0, 300)
    }`;
  } catch (err) {
    return `${cmd} is not installed (Debian package ${DEBIAN_TOOLS[name].pkg}): ${
      (err as Error).message
    }`;
  }
}

const warned = new Set<string>();

/**
 * True when `name` runs here. In CI a missing tool throws (the test fails);
 * locally this prints why once and returns false so the test can be ignored.
 */
export function requireTool(name: ToolName): boolean {
  const problem = toolProblem(name);
  if (problem === null) return true;
  if (isCi()) throw new Error(`CI needs ${name}: ${problem}; prepare.ts installs it with apt-get`);
  if (!warned.has(name)) {
    warned.add(name);
    console.warn(`warning: skipping tests that need ${name}: ${problem}`);
  }
  return false;
}

/**
 * Installs the packages of the missing tools with apt-get (one `apt-get update`
 * first). Does nothing when every tool runs. Returns what is still missing.
 * Requires `--allow-run`.
 */
export async function prepareDebianTools(): Promise<string[]> {
  const missing = (Object.keys(DEBIAN_TOOLS) as ToolName[]).filter((n) => toolProblem(n) !== null);
  if (missing.length === 0) return [];
  const pkgs = [...new Set(missing.map((n) => DEBIAN_TOOLS[n].pkg))];
  console.log(`prepare: apt-get install ${pkgs.join(" ")}`);
  const apt = async (args: string[]) => {
    try {
      const out = await new Deno.Command("apt-get", {
        args,
        stdin: "null",
        stdout: "null",
        stderr: "piped",
        env: { DEBIAN_FRONTEND: "noninteractive" },
      }).output();
      return out.success ? null : new TextDecoder().decode(out.stderr).trim().slice(-800);
    } catch (err) {
      return (err as Error).message;
    }
  };
  const failed = await apt(["update", "-qq"]) ??
    await apt(["install", "-y", "-qq", "--no-install-recommends", ...pkgs]);
  const still = missing.filter((n) => toolProblem(n) !== null);
  return still.map((n) => `${n}: ${failed ?? toolProblem(n)}`);
}
