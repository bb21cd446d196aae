/**
 * The README's fenced code blocks and the markers that say what a test does with them. A marker
 * is the HTML comment on the line right before a block, with `;`-separated parts:
 * - `runnable`: test/docs/readme.test.ts runs the block in the repository and expects exit 0;
 * - `runnable: serves`: it starts the block, which must serve the API at the URL it prints;
 * - `quickstart: <use> <role>`: test/package/quickstart.test.ts builds a new project for `<use>`
 *   from the packed package: role `setup` (commands run in an empty folder; `all` is every use's),
 *   a file name (the block is saved under it), or `run` (commands run in the project, last).
 * @example <!-- runnable: serves; quickstart: hapi app.ts -->
 */

export interface ReadmeBlock {
  /** 1-based line of the opening fence. */
  line: number;
  lang: string;
  code: string;
  mode: "runs" | "serves" | undefined;
  quickstart: { use: string; role: string } | undefined;
}

/** Every fenced block of `markdown`, with what its marker says. */
export function readmeBlocks(markdown: string): ReadmeBlock[] {
  const lines = markdown.split("\n");
  const found: ReadmeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)/.exec(lines[i] as string);
    if (open === null) continue;
    const end = lines.indexOf("```", i + 1);
    if (end === -1) throw new Error(`README: the block at line ${i + 1} is not closed`);
    const comment = /^<!--\s*(.*?)\s*-->$/.exec((lines[i - 1] ?? "").trim())?.[1] ?? "";
    let mode: ReadmeBlock["mode"];
    let quickstart: ReadmeBlock["quickstart"];
    for (const part of comment.split(";").map((p) => p.trim())) {
      if (part === "runnable") mode = "runs";
      else if (/^runnable:\s*serves$/.test(part)) mode = "serves";
      else if (part.startsWith("quickstart:")) {
        const m = /^quickstart:\s*(\S+)\s+(\S+)$/.exec(part);
        if (m === null) throw new Error(`README line ${i}: a quickstart marker is "quickstart: <use> <role>"`);
        quickstart = { use: m[1] as string, role: m[2] as string };
      } else if (part !== "" && /^(runnable|quickstart)/.test(part)) {
        throw new Error(`README line ${i}: unknown marker part "${part}"`);
      }
    }
    found.push({ line: i + 1, lang: open[1] ?? "", code: lines.slice(i + 1, end).join("\n"), mode, quickstart });
    i = end;
  }
  return found;
}
