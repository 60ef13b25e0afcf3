/**
 * Who a connection on mcp.sock speaks for, and the one line a client sends
 * before MCP starts: a hello (a session) or a control request (a CLI command's
 * one-shot ask). The daemon's socket server reads these lines, the socket
 * client writes them, and the runner hands the per-run token to `wats mcp`
 * under {@linkcode RUN_TOKEN_ENV}; so the contract lives below all three.
 *
 * @module
 */

/** The name MCP hosts know the wats server by: tools appear as `mcp__wats__<tool>`. */
export const MCP_SERVER_NAME = "wats";

/** The path MCP over HTTP is served at (src/mcp/http_server.ts). */
export const MCP_HTTP_PATH = "/mcp";

/** The URL of MCP over HTTP for `mcp.listen` (`127.0.0.1:7449` → `http://127.0.0.1:7449/mcp`). */
export function mcpHttpUrl(listen: string): string {
  return `http://${listen}${MCP_HTTP_PATH}`;
}

/** The variable that carries the runner's per-run token to `wats mcp`. */
export const RUN_TOKEN_ENV = "WATS_RUN_TOKEN";

/** How long a new connection may take to send its hello line. */
export const HELLO_TIMEOUT_MS = 10_000;

/** How long a client waits for the node to answer its hello line (longer than the node waits for one). */
export const HELLO_ANSWER_TIMEOUT_MS = 15_000;

/** Who a connection speaks for, decided by the daemon from the hello line. */
export interface SessionIdentity {
  /** The profile name the session signs as. */
  profile: string;
  /** The profile's public key (hex). */
  pubkey: string;
  /** True when the session presented a valid per-run token of the runner. */
  runner: boolean;
  /** The run id the token belongs to, for runner sessions. */
  runId?: string;
  /**
   * True when the client asked for data (`wats ui`): tool results then carry
   * `structuredContent` beside their text. Never for runner sessions, so what
   * an agent reads stays the fenced text.
   */
  data?: boolean;
}

/** The first line a client sends on mcp.sock, before MCP starts. */
export interface Hello {
  wats: "hello";
  profile?: string;
  token?: string;
  /** Ask for `structuredContent` in tool results (`wats ui`); ignored for runner sessions. */
  data?: boolean;
}

/** What a control request may ask. */
export const CONTROL_OPS = [
  "resume",
  "halt",
  "takeover",
  "sweep",
  // Coding agents' works (src/contracts/works.ts): list and show answer JSON
  // (`WorksPage`, `WorkDetail`); the others answer a message.
  "work_list",
  "work_show",
  "work_merge",
  "work_push",
  "work_send",
  "work_discard",
  // A person's new work (the dashboard's form): `checkout`, `work` (its name), `text` (the task).
  "work_new",
] as const;

/**
 * A one-shot request of a CLI command (`wats resume`, `wats guardian halt`)
 * sent instead of a hello. It is not an MCP tool: no agent session can send
 * it through MCP (the runner contract keeps these commands out of the agent's reach).
 * `takeover` is a foreground `wats` asking a node that `wats mcp` started in
 * the background to stop and make way; any other node refuses it.
 */
export interface ControlRequest {
  wats: "control";
  op: typeof CONTROL_OPS[number];
  reason?: string;
  /** The work's id (`WorkSummary.id`), for the `work_*` ops but `work_list`. */
  work?: string;
  /** `work_send`: the comment that becomes the next call's task. */
  text?: string;
  /** `work_send`: the file the comment is about, and its line in the new file. */
  file?: string;
  line?: number;
  /** `work_new`: the checkout (`[checkouts.NAME]`) and the harness (empty: the one enabled). */
  checkout?: string;
  harness?: string;
  /** `work_list`: the page, from 0. */
  page?: number;
  /** `work_push`: also open a draft pull request with `gh`. */
  draftPr?: boolean;
  /**
   * `work_merge`, `work_push`, `work_discard`: the head the person was shown;
   * the daemon refuses, changing nothing, when the work's branch is elsewhere.
   */
  head?: string;
}

/**
 * A client (`wats ui`) asking for the node's events as JSON lines, one per
 * event, until it hangs up; the node first answers `{"wats":"ready"}`.
 */
export interface WatchRequest {
  wats: "watch";
}

/** A hello, control or watch request as the one line that goes on the socket. */
export function sessionLine(first: Hello | ControlRequest | WatchRequest): string {
  return JSON.stringify(first) + "\n";
}

/** Why a first line is neither a hello nor a control request (codes of src/errors.ts). */
export type FirstLineRefusal = "mcp.no_hello" | "mcp.bad_hello" | "mcp.bad_control";

/** The first line read: a hello, a control request, or why it is neither. */
export type FirstLine =
  | { hello: Hello }
  | { watch: WatchRequest }
  | { control: ControlRequest }
  | { refused: FirstLineRefusal; message: string };

/**
 * Reads the first line of a connection (`null`: it ended first). A line that
 * names `"control"` and parses as one is a control request; anything else must
 * be a hello, and the refusal says what the first line must be.
 */
export function decodeFirstLine(line: string | null): FirstLine {
  if (line !== null && /^\s*\{\s*"wats"\s*:\s*"watch"\s*\}\s*$/.test(line)) {
    return { watch: { wats: "watch" } };
  }
  const control = decodeControl(line);
  return control ?? decodeHello(line);
}

function decodeControl(line: string | null): FirstLine | undefined {
  if (line === null || !line.includes('"control"')) return undefined;
  let v: Record<string, unknown>;
  try {
    v = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (v?.wats !== "control") return undefined;
  const op = CONTROL_OPS.find((o) => o === v.op);
  if (op === undefined) {
    return { refused: "mcp.bad_control", message: `unknown control op ${JSON.stringify(v.op)}` };
  }
  const out: ControlRequest = { wats: "control", op };
  for (const k of ["reason", "work", "text", "file", "head", "checkout", "harness"] as const) {
    if (v[k] === undefined) continue;
    if (typeof v[k] !== "string") {
      return { refused: "mcp.bad_control", message: `${k} must be a string` };
    }
    out[k] = v[k];
  }
  for (const k of ["line", "page"] as const) {
    if (v[k] === undefined) continue;
    if (!Number.isSafeInteger(v[k]) || (v[k] as number) < 0) {
      return { refused: "mcp.bad_control", message: `${k} must be a whole number ≥ 0` };
    }
    out[k] = v[k] as number;
  }
  if (v.draftPr !== undefined) {
    if (typeof v.draftPr !== "boolean") {
      return { refused: "mcp.bad_control", message: "draftPr must be true or false" };
    }
    out.draftPr = v.draftPr;
  }
  return { control: out };
}

function decodeHello(line: string | null): FirstLine {
  const expected = 'the first line must be {"wats":"hello","profile":"NAME"} (token optional)';
  if (line === null) {
    return { refused: "mcp.no_hello", message: `the connection ended before hello: ${expected}` };
  }
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { refused: "mcp.bad_hello", message: `the hello line is not JSON: ${expected}` };
  }
  if (
    typeof value !== "object" || value === null || (value as { wats?: unknown }).wats !== "hello"
  ) {
    return { refused: "mcp.bad_hello", message: expected };
  }
  const v = value as { profile?: unknown; token?: unknown; data?: unknown };
  if (v.profile !== undefined && typeof v.profile !== "string") {
    return { refused: "mcp.bad_hello", message: `profile must be a string: ${expected}` };
  }
  if (v.token !== undefined && typeof v.token !== "string") {
    return { refused: "mcp.bad_hello", message: `token must be a string: ${expected}` };
  }
  return {
    hello: {
      wats: "hello",
      ...(v.profile !== undefined ? { profile: v.profile } : {}),
      ...(v.token !== undefined ? { token: v.token } : {}),
      ...(v.data === true ? { data: true } : {}),
    },
  };
}
