/**
 * `npm run pack:server [-- --pack-destination DIR]`: the petstore-server tarball. In the repository
 * the server's package.json names the library by its folder (`petstore-lib: file:..`, the npm
 * workspace's link); the published package names the library's version. So the package is staged
 * in .tmp/ with that one dependency rewritten (its built dist/ and bin/ as they are), and packed from
 * there. Prints the tarball's path. Run `npm run build` first.
 */
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const server = join(root, "server");
const args = process.argv.slice(2);
const at = args.indexOf("--pack-destination");
const destination = resolve(at === -1 ? root : (args[at + 1] ?? root));

if (!existsSync(join(server, "dist", "index.js"))) {
  console.error("pack-server: server/dist is missing: run npm run build first");
  process.exit(2);
}
const library = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string };
const manifest = JSON.parse(readFileSync(join(server, "package.json"), "utf8"));
if (manifest.version !== library.version) {
  console.error(
    `pack-server: petstore-server is ${manifest.version}, petstore-lib ${library.version}: release them together`,
  );
  process.exit(2);
}
manifest.dependencies["petstore-lib"] = library.version;
delete manifest.scripts;

const stage = join(root, ".tmp", "pack-server");
rmSync(stage, { recursive: true, force: true });
mkdirSync(stage, { recursive: true });
writeFileSync(join(stage, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
for (const part of ["dist", "bin", "README.md"]) {
  if (existsSync(join(server, part))) cpSync(join(server, part), join(stage, part), { recursive: true });
}
cpSync(join(root, "LICENSE"), join(stage, "LICENSE"));
mkdirSync(destination, { recursive: true });
const out = execFileSync("npm", ["pack", "--json", "--pack-destination", destination], {
  cwd: stage,
  encoding: "utf8",
});
const [{ filename }] = JSON.parse(out) as [{ filename: string }];
console.log(join(destination, filename));
