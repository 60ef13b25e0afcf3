/**
 * Logging: LogTape with one human-readable sink on stderr. `wats node`'s JSON
 * lines on stdout are a separate event stream (src/contracts/node_events.ts), not logs.
 *
 * @module
 */

import { configure, getLogger, type Logger, type LogLevel, type LogRecord } from "@logtape/logtape";

/** Configures the process-wide (Worker-wide) logger, whose lines go to `write` (stderr). */
export async function setupLogging(level: LogLevel, write: (line: string) => void): Promise<void> {
  await configure({
    reset: true,
    sinks: {
      stderr: (record: LogRecord) => {
        const msg = record.message.map((m) => typeof m === "string" ? m : JSON.stringify(m)).join(
          "",
        );
        const props = Object.entries(record.properties)
          .filter(([, v]) => v !== undefined)
          .map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`)
          .join(" ");
        const lvl = record.level === "warning" ? "warn" : record.level;
        write(`${lvl}: ${msg}${props ? ` (${props})` : ""}`);
      },
    },
    loggers: [
      { category: ["wats"], lowestLevel: level, sinks: ["stderr"] },
      { category: ["logtape", "meta"], lowestLevel: "warning", sinks: ["stderr"] },
    ],
  });
}

/** The logger of one part of wats, e.g. `log("runner")`. */
export function log(part: string): Logger {
  return getLogger(["wats", part]);
}
