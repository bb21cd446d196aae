// Refuses a Node.js older than the engines field (>=22) with one line, before anything that
// would fail on it is loaded: importers load this first and import the rest dynamically.
const NEEDED = 22;

if (Number(process.versions.node.split(".")[0]) < NEEDED) {
  process.stderr.write(`petstore-server needs Node.js ${NEEDED} or later; this is Node.js ${process.versions.node}\n`);
  process.exit(1);
}
