/**
 * Headless Chromium for the browser suites: Debian's `chromium` driven by playwright-core (no
 * browser download), launched the same way for every suite (the docs page included). Without it a suite is
 * skipped with a loud SKIPPED line, except under CI=true, where the missing browser fails it.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, chromium } from "playwright-core";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const CI = process.env.CI === "true";

/** False (after a SKIPPED line naming `what`) when the suite must be skipped: no Chromium, not in CI. */
export function chromiumOrSkip(what: string): boolean {
  if (existsSync(CHROMIUM) || CI) return true;
  console.log(
    `\nSKIPPED: ${what} — no Chromium at ${CHROMIUM} (apt-get install -y chromium; CI=true makes this fail)\n`,
  );
  return false;
}

/** A fresh headless Chromium profile; `close()` ends it and removes the profile. */
export async function launchChromium(): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`Chromium is required under CI=true (missing ${CHROMIUM}: apt-get install -y chromium)`);
  }
  const profile = mkdtempSync(join(tmpdir(), "petstore-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    timeout: 30_000,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  context.setDefaultTimeout(20_000);
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
