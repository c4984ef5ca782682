// tests/mcp_http.sh: /mcp of `pg_todos serve` driven by the official MCP TypeScript SDK's
// Streamable HTTP client. Prints one line per check ("ok: …" / "FAILED: …") and exits 1 on a
// failure. Usage: node client.mjs BASE_URL TOKEN_OF_ACME TOKEN_OF_GLOBEX
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [base, acme, globex] = process.argv.slice(2);
let failed = 0;
const check = (what, ok, detail) => {
  console.log(ok ? `ok: ${what}` : `FAILED: ${what} ${JSON.stringify(detail)}`);
  if (!ok) failed += 1;
};

async function connect(query, token) {
  const url = new URL(`${base}/mcp?${query}`);
  const transport = new StreamableHTTPClientTransport(url, {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: "ts-sdk-test", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

const text = (r) => r.content.filter((c) => c.type === "text").map((c) => c.text).join("");

const a = await connect("list=ts-release&tools=claude-tasks", acme);
const names = (await a.listTools()).tools.map((t) => t.name).sort();
check("TS SDK: tools/list with ?tools=claude-tasks", JSON.stringify(names) === JSON.stringify(["TaskCreate", "TaskGet", "TaskList", "TaskUpdate"]), names);
const created = await a.callTool({ name: "TaskCreate", arguments: { subject: "ship from TypeScript", description: "x" } });
const id = created.structuredContent?.task?.id;
check("TS SDK: TaskCreate's text", !created.isError && text(created) === `Task #${id} created successfully: ship from TypeScript`, text(created));
const listed = await a.callTool({ name: "TaskList", arguments: {} });
check("TS SDK: TaskList lists it", !listed.isError && listed.structuredContent.tasks.map((t) => t.subject).join() === "ship from TypeScript", listed.structuredContent);
const refused = await a.callTool({ name: "TaskCreate", arguments: { subject: "" } });
check("TS SDK: a refusal is isError", refused.isError === true, text(refused));
await a.close();

const b = await connect("list=ts-release&tools=claude-tasks", globex);
const other = await b.callTool({ name: "TaskList", arguments: {} });
check("TS SDK: another tenant's token sees none of it", !other.isError && other.structuredContent.tasks.length === 0, other.structuredContent);
await b.close();

let status;
try {
  await connect("tools=claude-tasks", "pgt_" + "0".repeat(64));
  status = "connected";
} catch (e) {
  status = String(e);
}
check("TS SDK: a bogus token is refused (401, invalid_token)", status !== "connected" && /401|nauthorized|invalid_token/.test(status), status);

console.log(`${failed ? "FAILED" : "ok"}: the TypeScript SDK client (${failed} failed)`);
process.exit(failed ? 1 : 0);
