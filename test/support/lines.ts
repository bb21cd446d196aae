/** The numbered log lines the line-writer tests write: plain ones, or a mix of sizes and scripts. */
export function line(i: number, mixed: boolean): string {
  if (!mixed) return `{"n":${i},"pad":"${"x".repeat(100)}"}\n`;
  // Multi-byte text (up to 4 UTF-8 bytes a character) and, now and then, a line longer than a chunk.
  const pad = i % 97 === 5 ? "é😀z".repeat(6000) : i % 3 === 0 ? "日本".repeat(i % 50) : "a".repeat(i % 300);
  return `{"n":${i},"pad":"${pad}"}\n`;
}
