/** The little of oidc-provider (no types of its own) that test/support/oidc-provider.ts uses. */
declare module "oidc-provider" {
  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    callback(): (req: unknown, res: unknown) => void;
  }
}
