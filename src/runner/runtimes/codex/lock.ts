/**
 * Proving the Codex lock before the first run of a Codex version (docs/codex.md, "The lock").
 *
 * The self-check runs the exact command of a run once, with only the model provider replaced by
 * a scripted Responses server on 127.0.0.1 that answers "ok", and reads the first request Codex
 * sends: it may offer `list_mcp_resources`, `list_mcp_resource_templates`, `read_mcp_resource`,
 * `request_user_input` and the `mcp__wats` namespace, and nothing else; an `additional_tools`
 * input item or the responses-lite header means code mode (docs/harness_facts.md). Anything beyond
 * refuses the runtime, naming the tool.
 *
 * The result goes to `<data>/agent/codex/self-check.json` (next to the catalog), which
 * `wats status` shows, also after a refused start. A passed check is reused while Codex, the
 * model and the lock-down flags stay the same. Requires, besides the run's grants,
 * `--allow-net=127.0.0.1:0` (listening on an ephemeral loopback port, connecting nowhere).
 *
 * @module
 */

import { errorMessage } from "../../../error_message.ts";
import { HarnessError } from "../../../errors.ts";
import { MCP_SERVER_NAME } from "../../../contracts/session.ts";
import type { Harness, RunContext } from "../../harness.ts";
import type { SpawnFn } from "../../spawn.ts";
import { shortHash } from "./catalog.ts";

/** Tools a locked run may offer besides the `mcp__wats` namespace: Codex's own MCP readers. */
export const ALLOWED_CODEX_TOOLS: readonly string[] = [
  "list_mcp_resources",
  "list_mcp_resource_templates",
  "read_mcp_resource",
  "request_user_input",
];

/** The header a code-mode (responses-lite) request carries. */
export const RESPONSES_LITE_HEADER = "x-openai-internal-codex-responses-lite";

/** Where the catalog and the self-check result live: `<data>/agent/codex`. */
export function codexStateDir(agentDir: string): string {
  return `${agentDir}/codex`;
}

/** The self-check's file name in `<data>/agent/codex/`. */
export const SELF_CHECK_FILE = "self-check.json";

/** What the self-check found; the JSON of {@linkcode SELF_CHECK_FILE}. */
export interface SelfCheckResult {
  ok: boolean;
  /** What the check covered: Codex program and version, model, flags (a hash). */
  key: string;
  /** `codex-cli 0.171.0`, when Codex said it. */
  version?: string;
  program: string;
  /** `-m`, when one is set. */
  model?: string;
  /** ISO time of the check. */
  checked_at: string;
  /** The tools the first request offered (`mcp__wats/answer`, …). */
  tools: string[];
  /** Why the runtime is refused; absent when ok. */
  error?: string;
  duration_ms?: number;
}

type Json = Record<string, unknown>;

/** Every tool a request offers, as `namespace/name` or a bare name (`type` when unnamed). */
export function offeredTools(body: unknown): string[] {
  const walk = (tools: unknown, prefix: string): string[] =>
    (Array.isArray(tools) ? tools as Json[] : []).flatMap((t) =>
      t?.type === "namespace"
        ? walk(t.tools, `${String(t.name ?? "")}/`)
        : [`${prefix}${String(t?.name ?? t?.type)}`]
    );
  return walk((body as Json | null)?.tools, "");
}

/**
 * What in a first request breaks the lock: each tool beyond the allowed ones, an
 * `additional_tools` input item, the responses-lite header. Empty when the request is locked.
 */
export function lockProblems(headers: Record<string, string>, body: unknown): string[] {
  const problems: string[] = [];
  const wats = `mcp__${MCP_SERVER_NAME}/`;
  for (const t of offeredTools(body)) {
    if (!t.startsWith(wats) && !ALLOWED_CODEX_TOOLS.includes(t)) problems.push(`tool ${t}`);
  }
  const input = (body as Json | null)?.input;
  for (const item of Array.isArray(input) ? input as Json[] : []) {
    if (item?.type !== "additional_tools") continue;
    const names = offeredTools(item);
    problems.push(`an additional_tools item (${names.join(", ") || "empty"}): code mode`);
  }
  const lite = Object.entries(headers).find(([k]) => k.toLowerCase() === RESPONSES_LITE_HEADER);
  if (lite) problems.push(`the header ${RESPONSES_LITE_HEADER}: ${lite[1]} (code mode)`);
  return problems;
}

/** What a self-check needs. */
export interface SelfCheckOptions {
  /** Builds the run's harness with the given provider base URL (the loopback server's). */
  harness: (baseUrl: string) => Harness;
  /** The context of a run (prompt aside); its token must be valid for the daemon's MCP socket. */
  ctx: RunContext;
  spawn: SpawnFn;
  /** Kills a check that does not end; 120 s when unset. */
  timeoutMs?: number;
}

/** The first request the check's Codex sent, or why there was none. */
export interface SelfCheckRun {
  request?: { headers: Record<string, string>; body: unknown };
  exitCode: number | null;
  stderr: string;
}

/** The prompt of the self-check run. */
export const SELF_CHECK_PROMPT = "wats self-check: reply with the word ok and nothing else.\n";

/**
 * Runs the check's Codex once against a scripted loopback Responses server and returns the first
 * request it sent. Requires `--allow-net=127.0.0.1:0` and what a run needs.
 */
export async function runSelfCheck(o: SelfCheckOptions): Promise<SelfCheckRun> {
  let first: SelfCheckRun["request"];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (req) => {
      if (req.method !== "POST" || !new URL(req.url).pathname.endsWith("/responses")) {
        return Response.json({ error: { message: "not served", type: "not_found" } }, {
          status: 404,
        });
      }
      let body: unknown;
      try {
        body = JSON.parse(await req.text());
      } catch {
        body = undefined;
      }
      first ??= { headers: Object.fromEntries(req.headers), body };
      return okStream((body as Json | undefined)?.model);
    },
  );
  try {
    const port = (server.addr as Deno.NetAddr).port;
    const cmd = o.harness(`http://127.0.0.1:${port}/v1`).command({
      ...o.ctx,
      prompt: SELF_CHECK_PROMPT,
    });
    const proc = o.spawn({
      program: cmd.program,
      args: cmd.args,
      env: cmd.env,
      cwd: cmd.cwd,
      stdin: cmd.stdin,
    });
    const timer = setTimeout(() => proc.kill(), o.timeoutMs ?? 120_000);
    try {
      for await (const _ of proc.lines) { /* the request is what counts */ }
      const st = await proc.status;
      return { request: first, exitCode: st.code, stderr: proc.stderrTail() };
    } finally {
      clearTimeout(timer);
    }
  } finally {
    await server.shutdown();
  }
}

/** The cache key of a check: what decides the tools Codex offers. */
export function selfCheckKey(parts: {
  installKey: string;
  model?: string;
  args: readonly string[];
}): string {
  return shortHash(JSON.stringify([parts.installKey, parts.model ?? null, parts.args]));
}

/** Reads `<dir>/self-check.json`; undefined when there is none or it is unreadable. */
export function readSelfCheck(dir: string): SelfCheckResult | undefined {
  try {
    const r = JSON.parse(Deno.readTextFileSync(`${dir}/${SELF_CHECK_FILE}`));
    return typeof r === "object" && r !== null && typeof r.ok === "boolean" ? r : undefined;
  } catch {
    return undefined;
  }
}

/** Writes `<dir>/self-check.json` whole. */
export async function writeSelfCheck(dir: string, r: SelfCheckResult): Promise<void> {
  await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
  const path = `${dir}/${SELF_CHECK_FILE}`;
  const tmp = `${path}.${crypto.randomUUID()}.tmp`;
  await Deno.writeTextFile(tmp, JSON.stringify(r, null, 2) + "\n");
  await Deno.rename(tmp, path);
}

/** The verdict on a check's run: ok, or the reason the runtime is refused. */
export function judgeSelfCheck(run: SelfCheckRun): { tools: string[]; error?: string } {
  if (run.request === undefined) {
    const tail = run.stderr.trim().slice(-400);
    return {
      tools: [],
      error: `the Codex self-check made no model request (codex exited with code ` +
        `${run.exitCode}${tail ? `: ${tail}` : ""})`,
    };
  }
  const tools = offeredTools(run.request.body);
  const problems = lockProblems(run.request.headers, run.request.body);
  if (problems.length > 0) {
    return {
      tools,
      error: `the Codex self-check found more than the wats tools in the first request: ` +
        `${problems.join("; ")}. wats refuses agent.runtime = "codex" with this Codex; see ` +
        `docs/codex.md`,
    };
  }
  if (!tools.some((t) => t.startsWith(`mcp__${MCP_SERVER_NAME}/`))) {
    return {
      tools,
      error: `the Codex self-check's first request offered no wats tools (${tools.join(", ")})`,
    };
  }
  return { tools };
}

/**
 * Checks the lock unless a passed check with the same key is on file; writes the result either
 * way.
 *
 * @throws {HarnessError} code `harness.codex_lock` with the reason when the check fails.
 */
export async function ensureSelfCheck(
  o: SelfCheckOptions & {
    dir: string;
    key: string;
    program: string;
    version?: string;
    model?: string;
    now?: () => number;
  },
): Promise<{ result: SelfCheckResult; ran: boolean }> {
  const now = o.now ?? Date.now;
  const prior = readSelfCheck(o.dir);
  if (prior?.ok && prior.key === o.key) return { result: prior, ran: false };
  const started = now();
  let verdict: { tools: string[]; error?: string };
  try {
    verdict = judgeSelfCheck(await runSelfCheck(o));
  } catch (err) {
    verdict = { tools: [], error: `the Codex self-check could not run: ${errorMessage(err)}` };
  }
  const result: SelfCheckResult = {
    ok: verdict.error === undefined,
    key: o.key,
    ...(o.version !== undefined ? { version: o.version } : {}),
    program: o.program,
    ...(o.model !== undefined ? { model: o.model } : {}),
    checked_at: new Date(started).toISOString(),
    tools: verdict.tools,
    ...(verdict.error !== undefined ? { error: verdict.error } : {}),
    duration_ms: now() - started,
  };
  await writeSelfCheck(o.dir, result);
  if (!result.ok) throw new HarnessError("harness.codex_lock", result.error!);
  return { result, ran: true };
}

/** Records a refusal that came before the check could run (e.g. no catalog). */
export async function recordRefusal(
  dir: string,
  r: { program: string; error: string; now?: number },
): Promise<void> {
  await writeSelfCheck(dir, {
    ok: false,
    key: "",
    program: r.program,
    checked_at: new Date(r.now ?? Date.now()).toISOString(),
    tools: [],
    error: r.error,
  });
}

/** The `wats status` line of a check on file, or none. */
export function selfCheckStatusLine(dir: string): string | undefined {
  const r = readSelfCheck(dir);
  if (r === undefined) return undefined;
  const what = [r.version ?? r.program, r.model ? `model ${r.model}` : "Codex's default model"]
    .join(", ");
  if (r.ok) {
    return `codex lock: self-check passed at ${r.checked_at} (${what}): only ` +
      `${r.tools.join(", ")}`;
  }
  return `codex lock: REFUSED at ${r.checked_at} (${what}): ${r.error ?? "unknown reason"}`;
}

/** A Responses API stream that answers "ok" (the events Codex 0.171 needs). */
function okStream(model: unknown): Response {
  const shell = (status: string) => ({
    id: "resp_wats_self_check",
    object: "response",
    created_at: Math.floor(Date.now() / 1000),
    status,
    model: typeof model === "string" ? model : "self-check",
    output: [] as Json[],
  });
  const item = {
    type: "message",
    id: "msg_wats_self_check",
    role: "assistant",
    status: "completed",
    content: [{ type: "output_text", text: "ok", annotations: [] }],
  };
  const events: Json[] = [
    { type: "response.created", response: shell("in_progress") },
    {
      type: "response.output_item.added",
      output_index: 0,
      item: { ...item, status: "in_progress", content: [] },
    },
    {
      type: "response.output_text.delta",
      item_id: item.id,
      output_index: 0,
      content_index: 0,
      delta: "ok",
    },
    { type: "response.output_item.done", output_index: 0, item },
    {
      type: "response.completed",
      response: {
        ...shell("completed"),
        output: [item],
        usage: {
          input_tokens: 1,
          input_tokens_details: { cached_tokens: 0 },
          output_tokens: 1,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: 2,
        },
      },
    },
  ];
  const text = events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join("");
  return new Response(text, {
    headers: { "content-type": "text/event-stream", "cache-control": "no-cache" },
  });
}
