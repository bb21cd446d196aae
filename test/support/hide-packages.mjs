// What the hide-*.mjs preloads share: a resolve hook that makes the packages whose names match
// `pattern` look uninstalled (ERR_MODULE_NOT_FOUND), as in an application that did not install them.
import { register } from "node:module";

/** Registers the hook for `pattern` (a RegExp on the import specifier). */
export function hidePackages(pattern) {
  const hook = `
const pattern = new RegExp(${JSON.stringify(pattern.source)});
export async function resolve(specifier, context, next) {
  if (pattern.test(specifier)) {
    const error = new Error("Cannot find package '" + specifier + "' imported from " + context.parentURL);
    error.code = "ERR_MODULE_NOT_FOUND";
    throw error;
  }
  return next(specifier, context);
}`;
  register(`data:text/javascript,${encodeURIComponent(hook)}`);
}
