// Preloaded with --import by the metrics tests: makes the optional peer prom-client look
// uninstalled, as in an application that did not install it.
import { register } from "node:module";

const hook = `
export async function resolve(specifier, context, next) {
  if (/^prom-client(\\/|$)/.test(specifier)) {
    const error = new Error("Cannot find package '" + specifier + "' imported from " + context.parentURL);
    error.code = "ERR_MODULE_NOT_FOUND";
    throw error;
  }
  return next(specifier, context);
}`;
register(`data:text/javascript,${encodeURIComponent(hook)}`);
