// pi's own session loader (a file path: the package exports only its index, which does not
// re-export loadEntriesFromFile), as pi builds a context: loadEntriesFromFile, the version
// migration its SessionManager runs, then buildSessionContext to the last entry.
//   node pi_context.mjs print FILE        the context as JSON on stdout (a whole process)
//   node pi_context.mjs time FILE N       N timed load + build runs, seconds as a JSON list
//   node pi_context.mjs messages FILE     the messages only, for comparing with sessionctx
import {
  buildSessionContext,
  loadEntriesFromFile,
  migrateSessionEntries,
} from "./node_modules/@mariozechner/pi-coding-agent/dist/core/session-manager.js";

function context(file) {
  const entries = loadEntriesFromFile(file);
  migrateSessionEntries(entries);
  return buildSessionContext(entries.filter((e) => e.type !== "session"));
}

const [mode, file, n] = process.argv.slice(2);
if (mode === "print") {
  process.stdout.write(JSON.stringify(context(file)));
} else if (mode === "messages") {
  process.stdout.write(JSON.stringify(context(file).messages));
} else if (mode === "time") {
  const times = [];
  for (let i = 0; i < Number(n); i++) {
    const start = process.hrtime.bigint();
    const ctx = context(file);
    times.push(Number(process.hrtime.bigint() - start) / 1e9);
    if (!ctx.messages) throw new Error("no context");
  }
  process.stdout.write(JSON.stringify(times));
} else {
  process.stderr.write("usage: pi_context.mjs print|messages|time FILE [N]\n");
  process.exit(2);
}
