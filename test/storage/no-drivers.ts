/**
 * Run by the open tests with hide-drivers.mjs preloaded: the library and the memory storage work
 * without any driver package, and asking for a backend names the package to install.
 * Prints one JSON line: { memory, errors: { <spec>: "<name>: <message>" } }.
 */
import { createPetStore } from "../../lib/index.ts";
import { openStorage } from "../../lib/storage/open.ts";

const store = createPetStore({ auth: ["k"] });
const pet = await store.createPet({ name: "Rex", categoryId: 1 });
await store.close();

const errors: Record<string, string> = {};
for (const spec of process.argv.slice(2)) {
  try {
    const storage = await openStorage(spec);
    await storage.close();
    errors[spec] = "opened";
  } catch (error) {
    errors[spec] = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  }
}
process.stdout.write(`${JSON.stringify({ memory: pet.name, errors })}\n`);
