/**
 * Anything with `getTracer`, as `@opentelemetry/api`'s `TracerProvider`: typed loosely, in a file
 * of its own, so that the package's types never need the API (an optional peer).
 */
export interface TracerProviderLike {
  getTracer(name: string, version?: string): object;
}
