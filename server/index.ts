/**
 * `petstore-lib/server`: the standalone server, to start in-process (`startServer(config)`, with
 * `loadConfig(env, argv)` to read the configuration as the command does) or as the `petstore`
 * command (`main()`). Everything else in this folder is the server's own.
 */

// Moving data, from petstore-lib/transfer: the names the server has given since 1.3.
export type {
  AbandonResult,
  ExportHeader,
  ExportOptions,
  ExportRecord,
  ImportOptions,
  ImportResult,
} from "petstore-lib/transfer";
export { abandonImport, exportStore, ImportError, importFile, importStore } from "petstore-lib/transfer";
export { main } from "./cli.ts";
export type { LoadedConfig, LogLevel, ServerConfig } from "./config.ts";
export { ConfigError, loadConfig } from "./config.ts";
export type { Logger } from "./logger.ts";
export type { RunningServer, StartOptions } from "./start.ts";
export { startServer } from "./start.ts";
