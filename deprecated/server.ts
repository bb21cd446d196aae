/**
 * `petstore-lib/server`, kept until 2.0: the standalone server is the package petstore-server (1.4).
 * This entry re-exports it when it is installed; otherwise importing it fails with one line that
 * says what to install.
 * @deprecated Install petstore-server and import from "petstore-server".
 */
import type * as Server from "petstore-server";
import { loadServerPackage } from "./load.ts";

const server = await loadServerPackage<typeof Server>("petstore-server", "petstore-lib/server");

export type {
  AbandonResult,
  ExportHeader,
  ExportOptions,
  ExportRecord,
  ImportOptions,
  ImportResult,
  LoadedConfig,
  Logger,
  LogLevel,
  RunningServer,
  ServerConfig,
  StartOptions,
} from "petstore-server";
/** @deprecated Import from "petstore-server". */
export const abandonImport: typeof Server.abandonImport = server.abandonImport;
/** @deprecated Import from "petstore-server". */
export const ConfigError: typeof Server.ConfigError = server.ConfigError;
/** @deprecated Import from "petstore-server". */
export type ConfigError = Server.ConfigError;
/** @deprecated Import from "petstore-server". */
export const exportStore: typeof Server.exportStore = server.exportStore;
/** @deprecated Import from "petstore-server". */
export const ImportError: typeof Server.ImportError = server.ImportError;
/** @deprecated Import from "petstore-server". */
export type ImportError = Server.ImportError;
/** @deprecated Import from "petstore-server". */
export const importFile: typeof Server.importFile = server.importFile;
/** @deprecated Import from "petstore-server". */
export const importStore: typeof Server.importStore = server.importStore;
/** @deprecated Import from "petstore-server". */
export const loadConfig: typeof Server.loadConfig = server.loadConfig;
/** @deprecated Import from "petstore-server". */
export const main: typeof Server.main = server.main;
/** @deprecated Import from "petstore-server". */
export const startServer: typeof Server.startServer = server.startServer;
