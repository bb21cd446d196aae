/**
 * `petstore-lib/server`: the standalone server, to start in-process (`startServer(config)`, with
 * `loadConfig(env, argv)` to read the configuration as the command does) or as the `petstore`
 * command (`main()`). Everything else in this folder is the server's own.
 */
export { main } from "./cli.ts";
export type { LoadedConfig, LogLevel, ServerConfig } from "./config.ts";
export { ConfigError, loadConfig } from "./config.ts";
export type { Logger } from "./logger.ts";
export type { RunningServer, StartOptions } from "./start.ts";
export { startServer } from "./start.ts";
export type { ExportOptions } from "./transfer/export.ts";
export { exportStore } from "./transfer/export.ts";
export type { ExportHeader, ExportRecord } from "./transfer/format.ts";
export { ImportError } from "./transfer/format.ts";
export type { ImportOptions, ImportResult } from "./transfer/import.ts";
export { importFile, importStore } from "./transfer/import.ts";
