/**
 * The few domain errors of wats. Each carries a string `code`, a message that
 * says what happened and what to do next, and an optional `cause` shown under
 * `--verbose`.
 *
 * @module
 */

/** Base class: every error wats raises on purpose. */
export class WatsError extends Error {
  /** A stable, machine-readable code such as `config.unknown_key`. */
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
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
