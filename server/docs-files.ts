/**
 * Where the API reference page's files come from: Swagger UI's assets in the optional package
 * swagger-ui-dist (12 MB; most users embed the API without the page), looked up once.
 */
import { createRequire } from "node:module";
import { dirname } from "node:path";

/** Swagger UI's files the page serves, with their content types. */
export const ASSETS: Record<string, string> = {
  "swagger-ui.css": "text/css; charset=utf-8",
  "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
  "favicon-32x32.png": "image/png",
  "favicon-16x16.png": "image/png",
};

/** The optional package that holds Swagger UI's files. */
export const DOCS_PACKAGE = "swagger-ui-dist";

let dist: string | null | undefined; // the package's folder; null when it is not installed

/** The folder of swagger-ui-dist, or `undefined` when it is not installed (looked up once). */
export function distDir(): string | undefined {
  if (dist === undefined) {
    try {
      dist = dirname(createRequire(import.meta.url).resolve(`${DOCS_PACKAGE}/package.json`));
    } catch {
      dist = null;
    }
  }
  return dist ?? undefined;
}

/**
 * True when the API reference page can be served (the optional package swagger-ui-dist is
 * installed). @example if (!docsAvailable()) console.log("npm install swagger-ui-dist to serve /docs")
 */
export function docsAvailable(): boolean {
  return distDir() !== undefined;
}
