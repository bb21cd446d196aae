/**
 * Every relative link in the Markdown a user reads (README.md, CHANGELOG.md, docs/, bench/ and
 * examples/ pages) leads somewhere: the file exists, and a `#fragment` names a heading of it
 * (GitHub's slugs: lower case, punctuation dropped, spaces as hyphens).
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { ROOT } from "../support/program.ts";

const PAGES = [
  "README.md",
  "CHANGELOG.md",
  "bench/README.md",
  "examples/README.md",
  ...readdirSync(join(ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
];

/** GitHub's anchor of a heading. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[`*_]/g, "")
    .replace(/[^\p{L}\p{N}\- ]/gu, "")
    .replace(/ /g, "-");
}

function anchors(file: string): Set<string> {
  const text = readFileSync(file, "utf8").replace(/```[\s\S]*?```/g, "");
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1] as string)));
}

/** The relative links of a page, outside code blocks: [text](target). */
function links(page: string): string[] {
  const text = readFileSync(join(ROOT, page), "utf8").replace(/```[\s\S]*?```/g, "");
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1] as string)
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

test("docs: every relative link of the Markdown pages leads to a file, and its #fragment to a heading", () => {
  const broken: string[] = [];
  let checked = 0;
  for (const page of PAGES) {
    for (const target of links(page)) {
      checked++;
      const [path = "", fragment] = target.split("#");
      const file = path === "" ? join(ROOT, page) : join(ROOT, dirname(page), decodeURIComponent(path));
      if (!existsSync(file)) {
        broken.push(`${page}: ${target} (no ${relative(ROOT, file)})`);
        continue;
      }
      if (fragment !== undefined && statSync(file).isFile() && file.endsWith(".md") && !anchors(file).has(fragment)) {
        broken.push(`${page}: ${target} (no heading #${fragment} in ${relative(ROOT, file)})`);
      }
    }
  }
  assert.ok(checked > 50, `links were found (${checked})`);
  assert.equal(broken, []);
});

test.run();
