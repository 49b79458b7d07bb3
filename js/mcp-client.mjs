// The official MCP TypeScript SDK's client against an MCP server over streamable HTTP: lists and uses
// everything the server offers and prints one JSON document. Used by tests/mcp/test_sdk_clients.py.
// Usage: node js/mcp-client.mjs URL
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const url = new URL(process.argv[2]);
const client = new Client({ name: "ts-sdk-test", version: "1.0.0" }, { capabilities: { elicitation: {} } });
client.setRequestHandler(ElicitRequestSchema, async () => ({
  action: "accept",
  content: { row: 7, letter: "B" },
}));
await client.connect(new StreamableHTTPClientTransport(url));
const out = { server: client.getServerVersion(), protocol: client.transport.protocolVersion ?? null };
out.tools = (await client.listTools()).tools.map((t) => ({ name: t.name, outputSchema: !!t.outputSchema }));
out.resources = (await client.listResources()).resources.map((r) => r.uri);
out.templates = (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate);
out.readme = (await client.readResource({ uri: "docs://readme" })).contents[0];
out.book = (await client.readResource({ uri: "books://3" })).contents[0];
out.pixel = (await client.readResource({ uri: "images://pixel" })).contents[0];
out.prompts = (await client.listPrompts()).prompts.map((p) => ({ name: p.name, arguments: p.arguments }));
out.review = (await client.getPrompt({ name: "review", arguments: { code: "x = 1" } })).messages;
out.add = await client.callTool({ name: "add", arguments: { a: 2, b: 3 } });
out.seat = await client.callTool({ name: "choose_seat", arguments: { flight: "LH1" } });
try {
  await client.readResource({ uri: "docs://missing" });
  out.missing = null;
} catch (error) {
  out.missing = { code: error.code, message: error.message };
}
await client.close();
console.log(JSON.stringify(out));
