// The TypeScript SDKs' own StreamableHTTPClientTransport against `askq.py serve --http`:
// each completes a tools/call answered through a form (accept and decline), with the
// server's bearer token in an Authorization header.
//   node .ci/mcp_http_clients.mjs NODE_MODULES URL TOKEN
// The SDK 1.x (@modelcontextprotocol/sdk) speaks the handshake versions (2025-11-25,
// and 2025-06-18 when its initialize asks for it); the client 2.x
// (@modelcontextprotocol/client) also 2026-07-28, where forms come as input requests.
// Each checks the form's choice (the badge, the plain labels) and that the structured
// result holds the text; the client 2.x also lists the resources in the era it speaks.
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

const seen = [];  // what each handler was handed of a single choice: its keys

function answer(action) {
  return async (request) => {
    const properties = Object.keys(request.params.requestedSchema.properties);
    if (!properties.includes("q0") || !properties.includes("q1")) {
      throw new Error(`the form lacks its questions: ${properties.join(", ")}`);
    }
    // The recommendation badged in whichever titles the version has, and the
    // labels as a plain enum for clients that read only that.
    const q0 = request.params.requestedSchema.properties.q0;
    seen.push(Object.keys(q0).filter((key) => ["enum", "enumNames", "oneOf"].includes(key)).join("+"));
    const titles = q0.enumNames ?? (q0.oneOf ?? []).map((choice) => choice.title);
    if (!titles.includes("Postgres (Recommended)") || !(q0.enum ?? []).includes("Postgres")) {
      throw new Error(`the form's choice lacks the badge or the plain labels: ${JSON.stringify(q0)}`);
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
  if (result.structuredContent.result !== text) {
    throw new Error(`${label}: structuredContent.result is not the result's text: ${JSON.stringify(result.structuredContent)}`);
  }
  console.log(`${label}: ${action}: completed (${result.structuredContent.status}; its handler got a choice as ${seen.pop()})`);
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
  const listed = await client.listResources();  // the SDK checks the result against its version's schema
  if (listed.resources[0]?.uri !== "ui://askq/questions") {
    throw new Error(`resources/list under ${spoken}: ${JSON.stringify(listed)}`);
  }
  await client.close();
  check(`@modelcontextprotocol/client StreamableHTTPClientTransport under ${spoken}`, result, action);
}

// A person who takes 20 s, with a request timeout of 5 s that progress resets:
// the server's progress notes keep the call open until the answer comes.
async function slowPerson() {
  const { Client } = await load("@modelcontextprotocol/sdk/dist/esm/client/index.js");
  const { StreamableHTTPClientTransport } = await load("@modelcontextprotocol/sdk/dist/esm/client/streamableHttp.js");
  const { ElicitRequestSchema } = await load("@modelcontextprotocol/sdk/dist/esm/types.js");
  const client = new Client({ name: "ts-sdk-1-slow", version: "1" }, { capabilities: { elicitation: {} } });
  const quick = answer("accept");
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    await new Promise((resolve) => setTimeout(resolve, 20000));
    return quick(request);
  });
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  await client.connect(transport);
  let notes = 0;
  const started = Date.now();
  const result = await client.callTool({ name: "ask_questions", arguments: call }, undefined,
    { timeout: 5000, resetTimeoutOnProgress: true, onprogress: () => { notes += 1; } });
  await transport.terminateSession();
  await client.close();
  check(`@modelcontextprotocol/sdk, timeout 5 s reset on progress, answered after ${Math.round((Date.now() - started) / 1000)} s`
    + ` (${notes} progress notes)`, result, "accept");
}

try {
  await slowPerson();
  for (const action of ["accept", "decline"]) {
    await sdk1(null, action);
    await sdk1("2025-06-18", action);
    await client2(action);
  }
} catch (err) {
  console.log(`FAILED: ${err.stack || err}`);
  process.exit(1);
}
