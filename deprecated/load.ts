/**
 * The deprecated entries that moved to petstore-server (1.4) load it here: when it is not
 * installed, one line says what to install, where Node's own error would name a file.
 */

/** `specifier` (a petstore-server entry), imported; else an error of one line saying what to install. */
export async function loadServerPackage<T>(specifier: string, moved: string): Promise<T> {
  try {
    return (await import(specifier)) as T;
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    if (code !== "ERR_MODULE_NOT_FOUND" || !String((error as Error).message).includes("petstore-server")) throw error;
    throw new Error(
      `${moved} moved to the package petstore-server in 1.4: npm install petstore-server, and import from "${specifier}"`,
      { cause: error },
    );
  }
}
