// The TypeScript SDKs' own StreamableHTTPClientTransport against `askq.py serve --http`:
// each completes a tools/call answered through a form (accept and decline), with the
// server's bearer token in an Authorization header.
//   node .ci/mcp_http_clients.mjs NODE_MODULES URL TOKEN
// The SDK 1.x (@modelcontextprotocol/sdk) speaks the handshake versions (2025-11-25,
// and 2025-06-18 when its initialize asks for it); the client 2.x
// (@modelcontextprotocol/client) also 2026-07-28, where forms come as input requests.
// Each checks what the SDK's parse of the form hands its host (every option's title, the
// badge, each choice in one arm) and that the structured result holds the text; the client 2.x also lists the resources in the era it speaks.
// Prints one line per call and exits 1 on the first that does not complete as it should.
import path from "node:path";
import { pathToFileURL } from "node:url";

const [modules, url, token] = process.argv.slice(2);
const load = (name) => import(pathToFileURL(path.join(modules, name)).href);
const headers = { Authorization: `Bearer ${token}` };
const call = {
  questions: [
    { question: "Which database?", header: "Database",
      options: [{ label: "SQLite", description: "one file" }, "Postgres (Recommended)"] },
    { question: "Project name?", header: "Name" },
    { question: "Which checks?", header: "Checks", multiSelect: true,
      options: [{ label: "Lint", description: "ruff" }, "Tests (Recommended)"] },
  ],
};
// Every option's title as a person must see it: the badge, the description.
const SINGLE_TITLES = ["Postgres (Recommended)", "SQLite - one file", "Personalize your response", "You decide", "Let's discuss"];
const MULTI_TITLES = ["Lint - ruff", "Tests (Recommended)", "Personalize your response"];

const seen = [];  // what each handler was handed of the choices: the arms its parse kept

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

// What the SDK's parse of the request hands its host, checked as the host would draw it:
// each choice in one arm, with every option's title (the badge and the description).
function drawnChoices(properties) {
  const { q0, q2 } = properties;
  if (properties.q2_1) {  // 2025-06-18: enumNames, and one boolean per option
    const booleans = [properties.q2_1, properties.q2_2];
    if (!same(q0.enumNames, SINGLE_TITLES) || booleans[0].title !== "Lint" || booleans[0].description !== "ruff"
        || booleans[1].title !== "Tests (Recommended)") {
      throw new Error(`the 2025-06-18 form lost a title: ${JSON.stringify({ q0, booleans })}`);
    }
    return "enum+enumNames, booleans";
  }
  const single = (q0.oneOf ?? []).map((choice) => choice.title);
  const multi = (q2?.items?.anyOf ?? []).map((choice) => choice.title);
  if (!same(single, SINGLE_TITLES) || "enum" in q0 || "enumNames" in q0) {
    throw new Error(`the single choice reached the handler without its titles, or in two arms: ${JSON.stringify(q0)}`);
  }
  if (!same(multi, MULTI_TITLES)) {
    throw new Error(`the multi choice reached the handler without its titles: ${JSON.stringify(q2)}`);
  }
  return "oneOf, items.anyOf";
}

function answer(action) {
  return async (request) => {
    const properties = request.params.requestedSchema.properties;
    if (!["q0", "q1"].every((key) => key in properties)) {
      throw new Error(`the form lacks its questions: ${Object.keys(properties).join(", ")}`);
    }
    seen.push(drawnChoices(properties));
    const picks = properties.q2_1 ? { q2_1: true } : { q2: ["Lint"] };
    return action === "accept" ? { action, content: { q0: "SQLite", q1: "billing", ...picks } } : { action };
  };
}

function check(label, result, action) {
  const text = result.content[0].text;
  const wanted = action === "accept" ? ['picked: "SQLite"', 'picked: "Lint"'] : ["dismissed them without answering"];
  if (result.isError || !wanted.every((words) => text.includes(words))) {
    throw new Error(`${label}: the result does not say what the form gave: ${text}`);
  }
  if (result.structuredContent.result !== text) {
    throw new Error(`${label}: structuredContent.result is not the result's text: ${JSON.stringify(result.structuredContent)}`);
  }
  console.log(`${label}: ${action}: completed (${result.structuredContent.status}; its handler got the choices as ${seen.pop()},`
    + " every title kept)");
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
