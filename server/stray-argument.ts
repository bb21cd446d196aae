/**
 * The message for a stray argument on the command line (`petstore 4645`). Its usual cause is
 * `npm start --port 4645`: npm keeps the flags before `--` for itself (it sets `npm_config_port`)
 * and hands the command only the value. The message says what to type instead.
 */

/** The flags npm took for itself: the ones the command knows, set to "true" by npm (a flag without a value to npm). */
function flagsTakenByNpm(flags: readonly string[], env: NodeJS.ProcessEnv): string[] {
  return flags.filter((flag) => env[`npm_config_${flag.replaceAll("-", "_")}`] === "true");
}

/**
 * One line for ConfigError: the stray argument, and the command line that was most likely meant.
 *
 * @example strayArgument(["4645"], ["port"], { npm_lifecycle_event: "start", npm_config_port: "true" })
 *   // "unexpected argument '4645': did you mean `npm start -- --port 4645`? (npm keeps flags before -- for itself)"
 */
export function strayArgument(
  positionals: readonly string[],
  flags: readonly string[],
  env: NodeJS.ProcessEnv,
): string {
  const stray = positionals[0] ?? "";
  const said = `unexpected argument '${stray}'`;
  const script = env.npm_lifecycle_event;
  // npx and npm exec hand every flag on: only a script (npm start, npm run) keeps them.
  if (script === undefined || script === "npx") return `${said}: flags are written --name value (e.g. --port 8081)`;
  const run = script === "start" ? "npm start" : `npm run ${script}`;
  const taken = flagsTakenByNpm(flags, env);
  const meant = taken.length === 1 && positionals.length === 1 ? `--${taken[0]} ${stray}` : "--port 8081";
  return `${said}: did you mean \`${run} -- ${meant}\`? (npm keeps flags before -- for itself)`;
}
