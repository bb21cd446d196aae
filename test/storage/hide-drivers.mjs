// Preloaded with --import by the open tests: makes the optional driver packages (@keyv/redis,
// @keyv/sqlite, @keyv/postgres) look uninstalled, as in an application that did not install them.
import { hidePackages } from "../support/hide-packages.mjs";

hidePackages(/^@keyv\/(redis|sqlite|postgres)(\/|$)/);
