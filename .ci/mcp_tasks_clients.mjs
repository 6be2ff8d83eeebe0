// The TypeScript SDK 1.x's experimental tasks client against `askq.py serve`, over stdio
// and over HTTP (with a bearer token): each call is a task, polled as the SDK polls it.
//   node .ci/mcp_tasks_clients.mjs NODE_MODULES ASKQ_PY
// Three asks a transport, each with a request timeout of TIMEOUT_MS on every request:
//  - late: the person answers the form after the client's tasks/result has timed out and
//    been cancelled; the task goes on, the form's answer is taken, and the client's next
//    polls (tasks/get, tasks/result) get the answers;
//  - cancelled: the client cancels the task while its form is open: the form is withdrawn,
//    the waiting tasks/result gets the ask's end (timed out), tasks/get says cancelled, and
//    a second tasks/cancel is refused with -32602;
//  - restart: the server is killed (SIGKILL) while the task waits on the person, started
//    again on the same state folder (its default store), and a new client of the same name
//    finds the task, gets the form again and the answers.
// Then the client 2.x's HTTP transport under 2026-07-28 with the Tasks extension (below),
// and with it a client that listens for its task (subscriptions/listen) instead of polling.
// Prints one line per ask and exits 1 on the first that does not end as it should.
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [modules, askq] = process.argv.slice(2);
const load = (name) => import(pathToFileURL(path.join(modules, name)).href);
const { Client } = await load("@modelcontextprotocol/sdk/dist/esm/client/index.js");
const { StdioClientTransport } = await load("@modelcontextprotocol/sdk/dist/esm/client/stdio.js");
const { StreamableHTTPClientTransport } = await load("@modelcontextprotocol/sdk/dist/esm/client/streamableHttp.js");
const { ElicitRequestSchema, CallToolResultSchema } = await load("@modelcontextprotocol/sdk/dist/esm/types.js");

const TIMEOUT_MS = 3000;  // the client's own limit on each request
const PERSON_MS = 6000;  // how long the person takes: past the limit
const TOKEN = "tasks-token";
const RELATED = "io.modelcontextprotocol/related-task";
const state = fs.mkdtempSync(path.join(os.tmpdir(), "askq-tasks-"));
const env = { ...process.env, XDG_STATE_HOME: state };
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const questions = (label) => ({ questions: [{ question: `Which database (${label})?`, options: ["SQLite", "Postgres"] }] });

let person = async () => ({ action: "decline" });  // what the person does with the next form

// One askq server: stdio (the SDK starts it) or HTTP (started here, its URL read from its log).
class Server {
  constructor(kind) { this.kind = kind; }
  async start() {
    if (this.kind === "http") {
      this.process = spawn("python", [askq, "serve", "--http", "--port", "0", "--token", TOKEN],
        { env, stdio: ["ignore", "ignore", "pipe"] });
      let log = "";
      this.process.stderr.on("data", (chunk) => { log += chunk; });
      for (let tries = 0; tries < 100 && !/http:\/\/\S+\/mcp/.test(log); tries++) await sleep(100);
      this.url = log.match(/http:\/\/\S+\/mcp/)?.[0];
      if (!this.url) throw new Error(`serve --http did not start: ${log}`);
    }
    return this;
  }
  transport() {
    if (this.kind === "http") {
      return new StreamableHTTPClientTransport(new URL(this.url),
        { requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } } });
    }
    this.stdio = new StdioClientTransport({ command: "python", args: [askq, "serve"], env, stderr: "ignore" });
    return this.stdio;
  }
  kill() {
    process.kill(this.kind === "http" ? this.process.pid : this.stdio.pid, "SIGKILL");
  }
  stop() { if (this.kind === "http") this.process.kill(); }
}

async function connect(server) {
  const client = new Client({ name: "askq-tasks-check", version: "1" }, { capabilities: { elicitation: { form: {} } } });
  client.setRequestHandler(ElicitRequestSchema, async (request, extra) => {
    if (!request.params._meta?.[RELATED]?.taskId) {
      throw new Error(`a task's form without its task: ${JSON.stringify(request.params._meta)}`);
    }
    return person(request, extra);
  });
  await client.connect(server.transport());
  const tools = await client.listTools();
  if (tools.tools[0].execution?.taskSupport !== "optional") {
    throw new Error(`the tool does not say it may be a task: ${JSON.stringify(tools.tools[0])}`);
  }
  return client;
}

const options = { task: { ttl: 600000 }, timeout: TIMEOUT_MS };

async function stream(client, label, until = () => false) {
  const seen = { statuses: [] };
  for await (const message of client.experimental.tasks.callToolStream(
    { name: "ask_questions", arguments: questions(label) }, CallToolResultSchema, options)) {
    if (message.type === "taskCreated") seen.taskId = message.task.taskId;
    if (message.type === "taskStatus") seen.statuses.push(message.task.status);
    if (message.type === "result") seen.result = message.result;
    if (message.type === "error") seen.error = message.error;
    if (until(message, seen)) break;
  }
  return seen;
}

// Polls as the SDK's own stream does (tasks/get; tasks/result once the task is done or
// waits on input), and again after a tasks/result that hit the request limit.
async function completed(client, taskId) {
  for (;;) {
    const task = await client.experimental.tasks.getTask(taskId, { timeout: TIMEOUT_MS });
    if (task.status === "completed" || task.status === "input_required") {
      try {
        return await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema, { timeout: TIMEOUT_MS });
      } catch (error) {
        if (!/timed out/i.test(String(error.message))) throw error;
      }
    } else if (task.status !== "working") {
      throw new Error(`task ${task.status}`);
    }
    await sleep(task.pollInterval);
  }
}

function answered(result, label) {
  const text = result.content[0].text;
  if (result.isError || !text.includes('picked: "SQLite"') || result.structuredContent.status !== "answered") {
    throw new Error(`${label}: the result does not hold the person's answer: ${text}`);
  }
  if (result._meta?.[RELATED] === undefined) throw new Error(`${label}: tasks/result without its task: ${JSON.stringify(result._meta)}`);
}

async function late(kind) {
  const server = await new Server(kind).start();
  const client = await connect(server);
  person = async () => { await sleep(PERSON_MS); return { action: "accept", content: { q0: "SQLite" } }; };
  const began = Date.now();
  const seen = await stream(client, `late ${kind}`);
  if (seen.result || !/timed out/i.test(String(seen.error?.message))) {
    throw new Error(`late: the client's poll should have hit its ${TIMEOUT_MS} ms limit: ${seen.error ?? JSON.stringify(seen.result)}`);
  }
  const result = await completed(client, seen.taskId);
  answered(result, "late");
  await client.close();
  server.stop();
  console.log(`SDK 1.x tasks over ${kind}: a person answering after ${PERSON_MS} ms, past the client's`
    + ` ${TIMEOUT_MS} ms request limit (its tasks/result timed out: "${seen.error.message}"): completed`
    + ` in ${Date.now() - began} ms (statuses seen: ${seen.statuses.join(", ")})`);
}

async function cancelled(kind) {
  const server = await new Server(kind).start();
  const client = await connect(server);
  let taskId;
  let withdrawn = false;
  person = (request, extra) => new Promise((resolve) => {
    extra.signal.addEventListener("abort", () => { withdrawn = true; resolve({ action: "cancel" }); });
    client.experimental.tasks.cancelTask(taskId, { timeout: TIMEOUT_MS }).catch((error) => console.error(error));
  });
  const seen = await stream(client, `cancelled ${kind}`, (message, found) => { taskId = found.taskId; return false; });
  const task = await client.experimental.tasks.getTask(taskId, { timeout: TIMEOUT_MS });
  let again;
  try {
    await client.experimental.tasks.cancelTask(taskId, { timeout: TIMEOUT_MS });
  } catch (error) {
    again = error;
  }
  if (task.status !== "cancelled" || again?.code !== -32602 || seen.result?.structuredContent?.status !== "timed_out") {
    throw new Error(`cancelled: ${JSON.stringify({ task, again: String(again), seen })}`);
  }
  await client.close();
  server.stop();
  console.log(`SDK 1.x tasks over ${kind}: cancelled while its form was open: completed (the waiting`
    + ` tasks/result got ${seen.result.structuredContent.status}, the form ${withdrawn ? "withdrawn" : "left open"},`
    + ` tasks/get ${task.status}, a second cancel ${again.code})`);
}

async function restart(kind) {
  let server = await new Server(kind).start();
  let client = await connect(server);
  person = () => new Promise(() => {});  // the person has not answered when the server dies
  const seen = await stream(client, `restart ${kind}`, (message) => message.type === "taskStatus"
    && message.task.status === "input_required");
  server.kill();
  await client.close().catch(() => {});
  server = await new Server(kind).start();
  client = await connect(server);
  person = async () => ({ action: "accept", content: { q0: "SQLite" } });
  const result = await completed(client, seen.taskId);
  answered(result, "restart");
  await client.close();
  server.stop();
  console.log(`SDK 1.x tasks over ${kind}: the server killed (SIGKILL) while the task waited, started again`
    + " on the same store, the task found by a new client of the same name and answered: completed");
}

// The client 2.x (@modelcontextprotocol/client) has no tasks API of its own: its Client
// refuses a `resultType: "task"` (said, not failed, below). Its HTTP transport carries the
// Tasks extension's messages under 2026-07-28 as any client would send them: a call made a
// task, its form shown by tasks/get, answered by tasks/update, across a SIGKILL and a restart.
async function extension() {
  const { Client, StreamableHTTPClientTransport: Transport } = await load("@modelcontextprotocol/client/dist/index.mjs");
  const capabilities = { elicitation: { form: {} }, extensions: { "io.modelcontextprotocol/tasks": {} } };
  let server = await new Server("http").start();
  const client = new Client({ name: "askq-tasks-check-2", version: "2" }, { capabilities, versionNegotiation: { mode: "auto" } });
  await client.connect(new Transport(new URL(server.url), { requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } } }));
  let refused = "completed";
  try {
    await client.callTool({ name: "ask_questions", arguments: questions("client 2.x") });
  } catch (error) {
    refused = error.message;
  }
  const spoken = client.getNegotiatedProtocolVersion?.();
  await client.close();
  console.log(`client 2.x Client under ${spoken}, the extension declared: tools/call: ${refused}`);
  const meta = { "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": capabilities,
    "io.modelcontextprotocol/clientInfo": { name: "askq-tasks-check-2", version: "2" } };
  let transport;
  let next = 1;
  const waiting = new Map();
  const open = async () => {
    transport = new Transport(new URL(server.url), { requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } } });
    transport.onmessage = (message) => waiting.get(message.id)?.(message);
    await transport.start();
  };
  const request = (method, params) => new Promise((resolve) => {
    const id = next++;
    waiting.set(id, resolve);
    transport.send({ jsonrpc: "2.0", id, method, params: { ...params, _meta: meta } });
  });
  await open();
  const created = (await request("tools/call", { name: "ask_questions", arguments: questions("extension") })).result;
  if (created?.resultType !== "task") throw new Error(`extension: the call is no task: ${JSON.stringify(created)}`);
  server.kill();
  server = await new Server("http").start();
  await open();
  const waits = (await request("tasks/get", { taskId: created.taskId })).result;
  const [key] = Object.keys(waits?.inputRequests ?? {});
  if (waits?.status !== "input_required" || !key) throw new Error(`extension: after the restart: ${JSON.stringify(waits)}`);
  await request("tasks/update", { taskId: created.taskId, inputResponses: { [key]: { action: "accept", content: { q0: "SQLite" } } } });
  const done = (await request("tasks/get", { taskId: created.taskId })).result;
  if (done?.status !== "completed") throw new Error(`extension: not completed: ${JSON.stringify(done)}`);
  answered({ ...done.result, _meta: { [RELATED]: {} } }, "extension");
  const foreign = await new Promise((resolve) => {
    waiting.set("foreign", resolve);
    transport.send({ jsonrpc: "2.0", id: "foreign", method: "tasks/get", params: { taskId: created.taskId, _meta: {
      ...meta, "io.modelcontextprotocol/clientInfo": { name: "someone else", version: "1" } } } });
  });
  if (foreign.error?.code !== -32602) throw new Error(`extension: another client read the task: ${JSON.stringify(foreign)}`);
  await transport.close();
  server.stop();
  console.log("client 2.x transport under 2026-07-28, the Tasks extension: a task created, the server killed (SIGKILL)"
    + ` and started again, its form (${key}) shown by tasks/get and answered by tasks/update: completed;`
    + " another client's tasks/get: -32602");
}

// The same transport listening for its task: subscriptions/listen's own stream carries the
// acknowledgement and the task's whole state at each change (its form, then its result,
// after a tasks/update sent on another request), and ends with the listen's result.
async function listened() {
  const { StreamableHTTPClientTransport: Transport } = await load("@modelcontextprotocol/client/dist/index.mjs");
  const capabilities = { elicitation: { form: {} }, extensions: { "io.modelcontextprotocol/tasks": {} } };
  const meta = { "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": capabilities,
    "io.modelcontextprotocol/clientInfo": { name: "askq-tasks-listener", version: "2" } };
  const server = await new Server("http").start();
  const transport = new Transport(new URL(server.url), { requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } } });
  const waiting = new Map();
  const notes = [];
  transport.onmessage = (message) => (message.id === undefined ? notes.push(message) : waiting.get(message.id)?.(message));
  await transport.start();
  let next = 1;
  const request = (method, params) => new Promise((resolve) => {
    const id = next++;
    waiting.set(id, resolve);
    transport.send({ jsonrpc: "2.0", id, method, params: { ...params, _meta: meta } });
  });
  try {
    const created = (await request("tools/call", { name: "ask_questions", arguments: questions("listened") })).result;
    if (created?.resultType !== "task") throw new Error(`the call is no task: ${JSON.stringify(created)}`);
    const ended = request("subscriptions/listen", { notifications: { taskIds: [created.taskId] } });
    const told = (status) => notes.find((note) => note.method === "notifications/tasks" && note.params.status === status);
    for (let tries = 0; tries < 100 && !told("input_required"); tries++) await sleep(100);
    const asked = told("input_required");
    const [key] = Object.keys(asked?.params.inputRequests ?? {});
    if (!key) throw new Error(`no form was told: ${JSON.stringify(notes)}`);
    await request("tasks/update", { taskId: created.taskId, inputResponses: { [key]: { action: "accept", content: { q0: "SQLite" } } } });
    const result = await Promise.race([ended, sleep(15000).then(() => null)]);
    const acknowledged = notes[0];
    const done = told("completed");
    if (acknowledged?.method !== "notifications/subscriptions/acknowledged"
        || JSON.stringify(acknowledged.params.notifications) !== JSON.stringify({ taskIds: [created.taskId] })) {
      throw new Error(`not acknowledged first: ${JSON.stringify(notes)}`);
    }
    if (!done || !result?.result || result.result._meta?.["io.modelcontextprotocol/subscriptionId"] === undefined) {
      throw new Error(`the listen did not end with the task's result: ${JSON.stringify({ notes, result })}`);
    }
    answered({ ...done.params.result, _meta: { [RELATED]: {} } }, "listened");
    console.log("client 2.x transport under 2026-07-28, the Tasks extension: a task listened to (subscriptions/listen):"
      + ` acknowledged, told input_required (${key}) and, after a tasks/update on another request, completed with its`
      + " result, on the listen's own stream, which then ended: completed");
  } finally {
    await transport.close();
    server.stop();
  }
}

let status = 0;
for (const check of [extension, listened]) {
  try {
    await check();
  } catch (error) {
    console.log(`client 2.x transport, the Tasks extension: ${check.name}: FAILED: ${error.stack ?? error}`);
    status = 1;
  }
}
for (const kind of ["stdio", "http"]) {
  for (const check of [late, cancelled, restart]) {
    try {
      await check(kind);
    } catch (error) {
      console.log(`SDK 1.x tasks over ${kind}: ${check.name}: FAILED: ${error.stack ?? error}`);
      status = 1;
    }
  }
}
fs.rmSync(state, { recursive: true, force: true });
process.exit(status);
