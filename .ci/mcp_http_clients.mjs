// The TypeScript SDKs' own StreamableHTTPClientTransport against `askq.py serve --http`:
// each completes a tools/call answered through a form (accept and decline), with the
// server's bearer token in an Authorization header.
//   node .ci/mcp_http_clients.mjs NODE_MODULES URL TOKEN
// The SDK 1.x (@modelcontextprotocol/sdk) speaks the handshake versions (2025-11-25,
// and 2025-06-18 when its initialize asks for it); the client 2.x
// (@modelcontextprotocol/client) also 2026-07-28, where forms come as input requests.
// Prints one line per call and exits 1 on the first that does not complete as it should.
import path from "node:path";
import { pathToFileURL } from "node:url";

const [modules, url, token] = process.argv.slice(2);
const load = (name) => import(pathToFileURL(path.join(modules, name)).href);
const headers = { Authorization: `Bearer ${token}` };
const call = {
  questions: [
    { question: "Which database?", header: "Database", options: ["SQLite", "Postgres (Recommended)"] },
    { question: "Project name?", header: "Name" },
  ],
};

function answer(action) {
  return async (request) => {
    const properties = Object.keys(request.params.requestedSchema.properties);
    if (!properties.includes("q0") || !properties.includes("q1")) {
      throw new Error(`the form lacks its questions: ${properties.join(", ")}`);
    }
    return action === "accept" ? { action, content: { q0: "SQLite", q1: "billing" } } : { action };
  };
}

function check(label, result, action) {
  const text = result.content[0].text;
  const wanted = action === "accept" ? 'picked: "SQLite"' : "dismissed them without answering";
  if (result.isError || !text.includes(wanted)) {
    throw new Error(`${label}: the result does not say what the form gave: ${text}`);
  }
  console.log(`${label}: ${action}: completed (${result.structuredContent.status})`);
}

// Asks for 2025-06-18 where the SDK would ask for its latest: the server answers the
// version asked for, as the SDK of that time spoke it.
function asking(transport, version) {
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    if (message.method === "initialize") {
      message = { ...message, params: { ...message.params, protocolVersion: version } };
    }
    return send(message, options);
  };
  return transport;
}

async function sdk1(version, action) {
  const { Client } = await load("@modelcontextprotocol/sdk/dist/esm/client/index.js");
  const { StreamableHTTPClientTransport } = await load("@modelcontextprotocol/sdk/dist/esm/client/streamableHttp.js");
  const { ElicitRequestSchema } = await load("@modelcontextprotocol/sdk/dist/esm/types.js");
  const client = new Client({ name: "ts-sdk-1", version: "1" }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, answer(action));
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  await client.connect(version ? asking(transport, version) : transport);
  const result = await client.callTool({ name: "ask_questions", arguments: call });
  const spoken = transport.protocolVersion;
  await transport.terminateSession();
  await client.close();
  check(`@modelcontextprotocol/sdk StreamableHTTPClientTransport under ${spoken}`, result, action);
}

async function client2(action) {
  const { Client, StreamableHTTPClientTransport } = await load("@modelcontextprotocol/client/dist/index.mjs");
  const client = new Client({ name: "ts-client-2", version: "2" },
    { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: "auto" } });
  client.setRequestHandler("elicitation/create", answer(action));
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  await client.connect(transport);
  const result = await client.callTool({ name: "ask_questions", arguments: call });
  const spoken = client.getNegotiatedProtocolVersion?.() ?? transport.protocolVersion;
  await client.close();
  check(`@modelcontextprotocol/client StreamableHTTPClientTransport under ${spoken}`, result, action);
}

try {
  for (const action of ["accept", "decline"]) {
    await sdk1(null, action);
    await sdk1("2025-06-18", action);
    await client2(action);
  }
} catch (err) {
  console.log(`FAILED: ${err.stack || err}`);
  process.exit(1);
}
