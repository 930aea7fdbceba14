// Loads a session with its own agent's published reader and prints what that reader gives:
//   node readers.mjs MODULES pi FILE            pi's loadEntriesFromFile + buildSessionContext
//   node readers.mjs MODULES claude ID DIR      the Claude Agent SDK's getSessionMessages
// MODULES is the node_modules folder `npm ci` filled from this folder's package-lock.json.
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [modules, reader, ...args] = process.argv.slice(2);
const load = (path) => import(pathToFileURL(join(modules, path)).href);

if (reader === "pi") {
  const pi = await load("@mariozechner/pi-coding-agent/dist/core/session-manager.js");
  // as pi's SessionManager opens a session file: load, migrate to the current version, then
  // build the context of the branch ending at the last entry
  const entries = pi.loadEntriesFromFile(args[0]);
  const header = entries.find((e) => e.type === "session");
  pi.migrateSessionEntries(entries);
  const body = entries.filter((e) => e.type !== "session");
  const context = pi.buildSessionContext(body);
  console.log(JSON.stringify({ entries: entries.length, version: header?.version ?? null,
                               messages: context.messages }));
} else if (reader === "claude") {
  const sdk = await load("@anthropic-ai/claude-agent-sdk/sdk.mjs");
  const messages = await sdk.getSessionMessages(args[0], { dir: args[1] });
  console.log(JSON.stringify({ messages }));
} else {
  console.error(`unknown reader ${reader}`);
  process.exit(2);
}
