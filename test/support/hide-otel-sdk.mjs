// Preloaded with --import by the traces tests: makes the OpenTelemetry SDK's optional peers look
// uninstalled (the API stays: other packages bring it), as in an application that did not install them.
import { register } from "node:module";

const hook = `
export async function resolve(specifier, context, next) {
  if (/^@opentelemetry\\/(sdk-trace|resources|core|context-async-hooks|exporter-trace-otlp-[a-z]+)(\\/|$)/.test(specifier)) {
    const error = new Error("Cannot find package '" + specifier + "' imported from " + context.parentURL);
    error.code = "ERR_MODULE_NOT_FOUND";
    throw error;
  }
  return next(specifier, context);
}`;
register(`data:text/javascript,${encodeURIComponent(hook)}`);
