/** This package's version (a test holds it to package.json): the tracer's version in every span. */
export const VERSION = "1.4.0";
