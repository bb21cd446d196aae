/**
 * A Worker that tries to open the storage its request names (`?spec=redis://…`) and answers what
 * happened as JSON: { ok: true } or { name, message }. For the storage × runtime table.
 */
import { openStorage } from "../../lib/index.ts";

export default {
  async fetch(request: Request): Promise<Response> {
    const spec = new URL(request.url).searchParams.get("spec") ?? "memory";
    try {
      const storage = await openStorage(spec, { namespace: "workercheck" });
      await storage.close();
      return Response.json({ ok: true });
    } catch (error) {
      return Response.json({ name: (error as Error).name, message: (error as Error).message });
    }
  },
};
