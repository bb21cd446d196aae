/** The part of autocannon's programmatic API the bench uses (the package ships no types). */
declare module "autocannon" {
  interface Options {
    url: string;
    connections?: number;
    pipelining?: number;
    /** Seconds (autocannon stops on its one-second tick). */
    duration?: number;
    /** Stop after this many requests instead of a duration. */
    amount?: number;
    /** Seconds without an answer before a request counts as a time-out. */
    timeout?: number;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    /** Requests sent in turn; `setupRequest` may change each one before it is sent (e.g. a new header value). */
    requests?: {
      setupRequest?: (request: { headers: Record<string, string>; [name: string]: unknown }) => unknown;
    }[];
  }
  interface Result {
    requests: { total: number; average: number };
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    resets?: number;
    statusCodeStats: Record<string, { count: number }>;
  }
  function autocannon(options: Options): Promise<Result>;
  export default autocannon;
}
