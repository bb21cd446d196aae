// Preloaded with --import by the metrics tests: makes the optional peer prom-client look
// uninstalled, as in an application that did not install it.
import { hidePackages } from "./hide-packages.mjs";

hidePackages(/^prom-client(\/|$)/);
