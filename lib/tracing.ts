/**
 * Traces (contract 1.3, "Traces (OpenTelemetry)"): spans through `@opentelemetry/api`, an optional
 * peer looked for as each store is made. Without it nothing is loaded and nothing is
 * traced; with it and no tracer provider, a request asks for a tracer once and stops there. The
 * core never configures an SDK: spans go to the provider the application registered, or to
 * `createPetStore({ tracerProvider })`. No span carries a key, a token, a name, a body or a query.
 */
import type * as Otel from "@opentelemetry/api";
import { isPromise } from "./awaitable.ts";
import { isPetStoreError } from "./errors.ts";
import type { HeaderValue, PetStoreRequest, PetStoreResponse } from "./http.ts";
import { nodeBuiltin } from "./node-builtin.ts";
import type { GuardedCall } from "./storage/guard.ts";
import type { TracerProviderLike } from "./tracer-provider.ts";

type OtelApi = typeof Otel;

const API_PACKAGE = "@opentelemetry/api";
const TRACER_NAME = "petstore-lib";

// SpanKind and SpanStatusCode of the API (stable numbers of the OpenTelemetry specification).
const INTERNAL = 0;
const SERVER = 1;
const CLIENT = 2;
const ERROR = 2;

/**
 * `@opentelemetry/api` where it is installed, required synchronously through Node's `createRequire`
 * (Node, Bun, Deno), so that no request waits for it and no bundle meets an import of it; undefined
 * elsewhere (a browser, a Worker) or when it is not installed. Looked for once per store, when it is
 * made (Node's module cache keeps a found one): no state of ours in the module. Its own state
 * (provider, context manager, propagator) is global by its design, shared with the application's copy.
 */
export function otelApi(): OtelApi | undefined {
  try {
    const module = nodeBuiltin<{ createRequire(from: string): (id: string) => unknown }>("node:module");
    const api = module?.createRequire(import.meta.url)(API_PACKAGE) as OtelApi | undefined;
    return typeof api?.trace?.getTracer === "function" ? api : undefined;
  } catch {
    return undefined;
  }
}

/** Reads a header of any case (adapters give lower case; a `PetStoreRequest` may carry any). */
const HEADERS: Otel.TextMapGetter<Readonly<Record<string, HeaderValue>>> = {
  keys: (headers) => Object.keys(headers),
  get(headers, key) {
    const value = headers[key];
    if (value !== undefined) return value;
    for (const name of Object.keys(headers)) if (name.toLowerCase() === key) return headers[name];
    return undefined;
  },
};

/** The `db.system.name` of a storage's `kind` (semantic conventions' names). */
const DB_SYSTEMS: Record<string, string> = {
  postgres: "postgresql",
  redis: "redis",
  sqlite: "sqlite",
  memory: "memory",
};

/** One request's span and the context its storage calls run in. */
export interface RequestSpan {
  span: Otel.Span;
  context: Otel.Context;
  /** Made under a host's span (kind INTERNAL, named `petstore {operation}`), not the request's own SERVER span. */
  hosted: boolean;
}

/** What a request's span is named and carries once it was answered. */
export interface AnsweredRequest {
  method: string;
  /** The route's template, undefined when no route matched. */
  route: string | undefined;
  /** The operation (`listPets`, `createPet`, `getPet`), undefined for other routes. */
  operation: string | undefined;
  path: string;
  scheme: string;
  /** The principal's id, once authenticated (`enduser.id`); never a token. */
  principal?: string | undefined;
}

/** One store's tracer: `on` when `@opentelemetry/api` is installed. */
export class Tracing {
  private readonly api: OtelApi | undefined;
  /** The tracer, once there is one: the provider's handed in, or the registered provider's. */
  private tracer: Otel.Tracer | undefined;
  /** The API's global provider, asked for a tracer until an application registers one. */
  private readonly global: Otel.ProxyTracerProvider | undefined;
  private readonly version: string;
  private readonly dbSystem: string;

  constructor(backend: string, provider: TracerProviderLike | undefined, version: string) {
    this.dbSystem = DB_SYSTEMS[backend] ?? backend;
    this.version = version;
    const api = otelApi();
    this.api = api;
    // A provider handed in without the API to be found (it is what makes contexts and reads headers): no spans.
    if (api === undefined) return;
    if (provider !== undefined) this.tracer = provider.getTracer(TRACER_NAME, version) as Otel.Tracer;
    else this.global = api.trace.getTracerProvider() as Otel.ProxyTracerProvider;
  }

  /** Whether spans can be made (the API is installed): false skips every step below. */
  get on(): boolean {
    return this.api !== undefined;
  }

  /**
   * The tracer, or undefined while no provider is registered: then a request costs one call, not a
   * no-op span and its contexts (bench O3). The global provider's delegate, as the API's own proxy
   * tracer takes it, kept once found.
   */
  private tracerNow(): Otel.Tracer | undefined {
    if (this.tracer === undefined && this.global !== undefined) {
      this.tracer =
        typeof this.global.getDelegateTracer === "function"
          ? this.global.getDelegateTracer(TRACER_NAME, this.version)
          : this.global.getTracer(TRACER_NAME, this.version);
    }
    return this.tracer;
  }

  /**
   * The span of a request: a child of the host's span when a host (its HTTP instrumentation) made
   * one, else a SERVER span continuing the caller's `traceparent`. Undefined when nothing records
   * (no provider): then nothing else is done for the request.
   */
  startRequest(request: PetStoreRequest): RequestSpan | undefined {
    const tracer = this.tracerNow();
    if (tracer === undefined) return undefined;
    const api = this.api as OtelApi;
    const active = api.context.active();
    const host = api.trace.getSpan(active);
    const hosted = host !== undefined && api.isSpanContextValid(host.spanContext());
    const parent = hosted ? active : api.propagation.extract(active, request.headers, HEADERS);
    const span = tracer.startSpan(request.method, { kind: hosted ? INTERNAL : SERVER }, parent);
    if (!api.isSpanContextValid(span.spanContext())) return undefined;
    return { span, context: api.trace.setSpan(parent, span), hosted };
  }

  /** Runs `answer` in the request's context, so that the storage calls it makes are the span's children. */
  within<T>(request: RequestSpan, answer: () => T): T {
    return (this.api as OtelApi).context.with(request.context, answer);
  }

  /** Names the request's span from what was answered, sets its attributes and ends it. */
  endRequest({ span, hosted }: RequestSpan, answered: AnsweredRequest, response: PetStoreResponse): void {
    if (span.isRecording()) {
      const { method, route, operation } = answered;
      const name = route === undefined ? method : `${method} ${route}`;
      span.updateName(hosted ? `petstore ${operation ?? name}` : name);
      span.setAttribute("http.request.method", method);
      if (route !== undefined) span.setAttribute("http.route", route);
      span.setAttribute("http.response.status_code", response.status);
      span.setAttribute("url.path", answered.path);
      span.setAttribute("url.scheme", answered.scheme);
      if (answered.principal !== undefined) span.setAttribute("enduser.id", answered.principal);
      if (response.status >= 500) {
        span.setAttribute("error.type", String(response.status));
        span.setStatus({ code: ERROR });
      }
    }
    span.end();
  }

  /** An in-process operation (`store.createPet(…)`): an INTERNAL span `petstore {operation}` around it. */
  async inProcess<T>(operation: string, call: () => Promise<T>): Promise<T> {
    const tracer = this.tracerNow();
    if (tracer === undefined) return call();
    const api = this.api as OtelApi;
    const active = api.context.active();
    const span = tracer.startSpan(`petstore ${operation}`, { kind: INTERNAL }, active);
    if (!api.isSpanContextValid(span.spanContext())) return call();
    try {
      return await api.context.with(api.trace.setSpan(active, span), call);
    } catch (error) {
      // A refusal of the caller's input (a 4xx) is the operation working, not failing.
      if (!isPetStoreError(error) || error.status >= 500) failed(span, error);
      throw error;
    } finally {
      span.end();
    }
  }

  /**
   * A storage call: a span `petstore.storage {operation}`, the child of the request's (or the
   * operation's) span, the parent of the driver's own spans (a Redis or pg instrumentation's).
   */
  storageCall<T>(operation: string, call: () => T | Promise<T>): T | Promise<T> {
    const tracer = this.tracerNow();
    if (tracer === undefined) return call();
    const api = this.api as OtelApi;
    const active = api.context.active();
    const span = tracer.startSpan(
      `petstore.storage ${operation}`,
      {
        kind: this.dbSystem === "memory" ? INTERNAL : CLIENT,
        attributes: { "db.system.name": this.dbSystem, "db.operation.name": operation },
      },
      active,
    );
    if (!api.isSpanContextValid(span.spanContext())) return call();
    let result: T | Promise<T>;
    try {
      result = api.context.with(api.trace.setSpan(active, span), call);
    } catch (error) {
      failed(span, error);
      span.end();
      throw error;
    }
    if (!isPromise(result)) {
      span.end();
      return result;
    }
    return result.then(
      (value) => {
        span.end();
        return value;
      },
      (error: unknown) => {
        failed(span, error);
        span.end();
        throw error;
      },
    );
  }
}

/** Marks a span failed: status ERROR, `error.type` (the contract's code, or the error's name) and the exception. */
function failed(span: Otel.Span, error: unknown): void {
  const code = (error as { code?: unknown } | null)?.code;
  span.setAttribute("error.type", typeof code === "string" ? code : ((error as Error | null)?.name ?? "Error"));
  span.setStatus({ code: ERROR });
  if (error instanceof Error) span.recordException(error);
}

/** The checks of `tracerProvider`: a TypeError unless it has `getTracer`. */
export function checkTracerProvider(value: unknown): TracerProviderLike | undefined {
  if (value === undefined) return undefined;
  if (typeof (value as TracerProviderLike | null)?.getTracer !== "function") {
    throw new TypeError("createPetStore: tracerProvider must be a TracerProvider (an object with getTracer)");
  }
  return value as TracerProviderLike;
}

/** The guard with a span around each storage call of an operation (not readiness probes: they are not a request's). */
export function traceStorage(guard: GuardedCall, tracing: Tracing): GuardedCall {
  return (operation, call) =>
    tracing.on && operation !== "ready"
      ? tracing.storageCall(operation, () => guard(operation, call))
      : guard(operation, call);
}
