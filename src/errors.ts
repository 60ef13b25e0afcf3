/**
 * The few domain errors of wats. Each carries a string `code`, a message that
 * says what happened and what to do next, and an optional `cause` shown under
 * `--verbose`.
 *
 * @module
 */

import type { RejectCode } from "./contracts/reject_codes.ts";

/**
 * Every failure wats reports on purpose, as a closed list: a typo is a type
 * error, and this is where a newcomer sees what can go wrong. Grouped by area.
 */
export type ErrorCode =
  // a post the network or a draft failed validation with (src/posts/validate.ts)
  | `post.${RejectCode}`
  | `review.${RejectCode}`
  // a wats MCP tool answered with an error (src/mcp/socket_client.ts)
  | `tool.${string}`
  // acp
  | "acp.bad_checkout"
  | "acp.bad_work"
  | "acp.budget"
  | "acp.cancelled"
  | "acp.closed"
  | "acp.halted"
  | "acp.git"
  | "acp.no_checkout"
  | "acp.no_continue"
  | "acp.no_harness"
  | "acp.no_worktree"
  | "acp.request"
  | "acp.sandbox"
  | "acp.spawn"
  // `wats work …` (src/acp/work_ops.ts): no such work, or the operation was refused
  | "acp.no_work"
  | "acp.work_moved"
  | "acp.work_refused"
  // agent
  | "agent.access"
  | "agent.allow"
  | "agent.codex_env_key"
  | "agent.codex_provider"
  | "agent.max_turns"
  | "agent.runtime"
  | "agent.harness"
  // claude
  | "claude.register"
  // config
  | "config.bad_checkout"
  | "config.bad_value"
  | "config.flag_twice"
  | "config.is_table"
  | "config.listen"
  | "config.malformed"
  | "config.not_a_table"
  | "config.removed_key"
  | "config.unknown_key"
  // daemon
  | "daemon.absent"
  | "daemon.foreground"
  | "daemon.refused"
  | "daemon.running"
  // data_dir
  | "data_dir.create"
  | "data_dir.not_a_directory"
  | "data_dir.unwritable"
  | "data_dir.not_private"
  // harness
  | "harness.codex_catalog"
  | "harness.codex_features"
  | "harness.codex_lock"
  | "harness.not_found"
  | "harness.sandbox"
  | "harness.spawn"
  // identity
  | "identity.bad_input"
  | "identity.node_key_create"
  | "identity.node_key_read"
  | "identity.node_key_size"
  // mcp
  | "mcp.bad_caps"
  | "mcp.bad_control"
  | "mcp.bad_draft_id"
  | "mcp.bad_hello"
  | "mcp.bad_to"
  | "mcp.closing"
  | "mcp.empty_query"
  | "mcp.http_listen"
  | "mcp.http_port_busy"
  | "mcp.no_control"
  | "mcp.no_hello"
  | "mcp.query_too_long"
  | "mcp.reason_too_long"
  | "mcp.socket_busy"
  | "mcp.socket_path"
  | "mcp.token_file"
  | "mcp.token_unknown"
  // net
  | "net.listen"
  // post
  | "post.bad_cap"
  | "post.bad_id"
  | "post.bad_to"
  | "post.empty"
  | "post.invalid"
  | "post.kind"
  | "post.needs_parent"
  | "post.no_title"
  | "post.reply_title"
  | "post.title_lines"
  | "post.title_too_long"
  | "post.to_not_ask"
  | "post.too_long"
  | "post.too_many_caps"
  | "post.too_many_to"
  | "post.unknown_parent"
  // profile
  | "profile.invalid"
  // review
  | "review.bad_id"
  | "review.busy"
  | "review.editor"
  | "review.empty"
  | "review.expired"
  | "review.no_agents"
  | "review.publishing"
  | "review.refused"
  | "review.unknown"
  | "review.unreadable"
  // runs
  | "runs.bad_id"
  | "runs.unknown"
  // safety
  | "safety.bad_settings"
  | "safety.settings_write"
  | "safety.unreadable"
  // service
  | "service.bad_env_file"
  | "service.bad_path"
  | "service.no_data_dir"
  | "service.no_home"
  | "service.unsupported_os"
  // session
  | "session.token"
  // setup
  | "setup.config"
  | "setup.no_cli"
  // store
  | "store.bad_filter"
  | "store.bad_limit"
  | "store.bad_search"
  | "store.closed"
  | "store.insert"
  | "store.migrate"
  | "store.newer_schema"
  | "store.not_a_post"
  | "store.open"
  | "store.outbox_unknown"
  // thread
  | "thread.unknown"
  // try (src/cli/try.ts)
  | "try.halted"
  | "try.no_agent"
  | "try.no_dir"
  | "try.no_endpoint"
  | "try.no_id"
  | "try.node_failed"
  // ui
  | "ui.ambiguous_host"
  | "ui.bad_form"
  | "ui.not_loopback"
  | "ui.port_busy"
  // usage
  | "usage";

/** Base class: every error wats raises on purpose. */
export class WatsError extends Error {
  /** A stable, machine-readable code such as `config.unknown_key`. */
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}

/** A bad setting, flag or config file. */
export class ConfigError extends WatsError {}

/** The store could not do what was asked. */
export class StoreError extends WatsError {}

/** A post failed validation; `code` says which rule. */
export class PostError extends WatsError {}

/** The command line is wrong: print the message and the usage hint. */
export class UsageError extends WatsError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("usage", message, options);
  }
}

/** Another process holds what this one needs (the daemon lock, the socket). */
export class BusyError extends WatsError {}

/** A harness (Claude Code, Codex, ACP agent) failed to start or run. */
export class HarnessError extends WatsError {}
