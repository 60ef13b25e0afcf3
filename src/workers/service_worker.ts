/**
 * Worker: `wats service install|uninstall|status`. Permissions: "service-install",
 * "service-uninstall", "service-status" in src/cli/permissions.ts.
 *
 * @module
 */
import { serveCommand } from "../cli/worker_entry.ts";
import { serviceCommand } from "../cli/service.ts";

serveCommand((ctx) => serviceCommand(ctx));
