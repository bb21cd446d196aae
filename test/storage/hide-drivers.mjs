// Preloaded with --import by the open tests: makes the optional driver packages (@keyv/redis,
// @keyv/sqlite, @keyv/postgres) look uninstalled, as in an application that did not install them.
import { register } from "node:module";

const hook = `
export async function resolve(specifier, context, next) {
  if (/^@keyv\\/(redis|sqlite|postgres)(\\/|$)/.test(specifier)) {
    const error = new Error("Cannot find package '" + specifier + "' imported from " + context.parentURL);
    error.code = "ERR_MODULE_NOT_FOUND";
    throw error;
  }
  return next(specifier, context);
}`;
register(`data:text/javascript,${encodeURIComponent(hook)}`);
