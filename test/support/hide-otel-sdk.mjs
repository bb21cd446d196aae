// Preloaded with --import by the traces tests: makes the OpenTelemetry SDK's optional peers look
// uninstalled (the API stays: other packages bring it), as in an application that did not install them.
import { hidePackages } from "./hide-packages.mjs";

hidePackages(/^@opentelemetry\/(sdk-trace|resources|core|context-async-hooks|exporter-trace-otlp-[a-z]+)(\/|$)/);
