// The in-chat view and the page by URL, with the official clients and the MCP Apps
// SDK's own host side, in a real browser.
//
//     node tools/apps_check.mjs --modules DIR [--askq askq.py] [--shots DIR] [--only TEXT]
//
// DIR holds node_modules with @modelcontextprotocol/ext-apps, @modelcontextprotocol/sdk
// (1.x), @modelcontextprotocol/client (2.x), puppeteer-core and esbuild; the browser is
// Debian's chromium (CHROMIUM overrides /usr/bin/chromium), run headless.
//
// The view: the TypeScript client, connected to `askq.py serve` over stdio and over
// HTTP, declares the MCP Apps extension, calls ask_questions and reads the view's
// resource; the ext-apps AppBridge (bundled for the browser with esbuild, in a
// throw-away directory) runs in a host page and draws the view in a sandboxed frame,
// forwarding the view's tool calls to the client.  At 320 px and 1280 px, light and
// dark: the example and a hostile call render (no script from the model's text runs,
// U+202E shows as an escape, no request leaves the frame, nothing scrolls sideways),
// the theme and fonts come from the host context, the frame follows the view's size;
// a person's picks, typed text, notes, states, a refused submission, a message the
// conversation refuses once, "ask me more first" and a dismissal reach the host as the
// ui/message whose text is exactly result_text() of that outcome (computed by askq from
// the same answers given in its own answer form); a picture attached by the file input
// is previewed from its bytes, a file whose bytes are a web page is refused by the server
// in the page's words with picks and files kept, and once it is removed the picture
// follows the message's text as an image block.
//
// The page by URL: a call holding a secret question, from the SDK 1.x under
// 2025-11-25 and the client 2.x under 2026-07-28, over stdio and HTTP, each with a
// URL handler that opens the page in the browser and answers it as a person (and the
// mcp SDK's Python client likewise, in the Python that MCP_PYTHON names, a picture
// attached on the page, which must reach that client as an image block); and
// under `serve --web`, a client that opens URLs and draws no forms.  The secret must
// appear in the model's result and in nothing else the client or the logs saw.
//
// Beside them, the two other ways: a host with forms and views keeps the form (its view
// has nothing to answer), and under `serve --web` a client with neither gets the page
// the server opens and logs to it, answered there.
//
// App-rendered forms (SEP-3118): a host that declares `elicitation` in its MCP Apps
// settings gets forms that name the view; the test host, written to the SEP (the
// published ext-apps has no API for it yet), reads the view, draws it with the
// AppBridge, forwards the form's `elicitation/create` to it once both sides declared
// `elicitation`, and hands askq the view's ElicitResult unchanged: a person's picks and
// typed text, and a dismissal, reach the model as result_text() of that outcome.
// Then the official Inspector's web client (@modelcontextprotocol/inspector, when DIR
// holds it), with `askq.py serve` as its stdio server: it declares the same, draws the
// call's form with askq's view, and shows the model's result of what a person did there.
//
// Prints one line per check and the view's size and time to first render; --shots DIR
// saves a screenshot of the host with the view, drawn and refused, at each width and theme;
// --only TEXT runs only the rounds whose label holds TEXT.
// Exit status: 0 when every check passed, 1 when any failed, 2 when it could not run.

import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { spawn, spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";

const args = process.argv.slice(2);
function option(name, fallback) {
  const at = args.indexOf(name);
  return at >= 0 && at + 1 < args.length ? args[at + 1] : fallback;
}
const ROOT = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const MODULES = path.resolve(option("--modules", ""), "node_modules");
const ASKQ = option("--askq", path.join(ROOT, "askq.py"));
const PYTHON = process.env.PYTHON || "python3";
const SHOTS = option("--shots", "");
const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
const APPS = { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } };
const TOKEN = "apps-check-token";
const CUSTOM = "Personalize your response";
const EXAMPLE = JSON.parse(fs.readFileSync(path.join(ROOT, "example_args.json"), "utf8"));
const HOSTILE = {
  questions: [{
    question: "<script>parent.postMessage({jsonrpc:'2.0',id:77,method:'ui/message',params:{role:'user'," +
      "content:[{type:'text',text:'pwned'}]}},'*')</script> evil \u202eedoc\u202c " + "x".repeat(200),
    header: "<img src=x onerror=\"parent.postMessage({jsonrpc:'2.0',method:'pwned'},'*')\">",
    purpose: "<style>body{display:none}</style> /a/very/long/path/" + "y".repeat(150),
    options: [
      { label: "<img src=http://127.0.0.1:9/x.png>", description: "<a href=http://127.0.0.1:9/>link</a>",
        preview: "```\n<iframe src=http://127.0.0.1:9/></iframe>\n```\n<svg onload=alert(1)>" },
      "\" onfocus=\"alert(2)\" autofocus x=\"",
    ],
  }, { question: "Why?", placeholder: "\"><script>alert(3)</script>" }],
};
const NUMBER_CALL = { questions: [
  { id: "n", question: "How much memory?", type: "number", minimum: 1, maximum: 64, step: 0.5, unit: "GB" },
] };
// A picture a person attaches in the view, and a page that says it is one.
const PICTURE = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
let FILES = "";  // where they are written, in the run's scratch directory
function writeFiles(dir) {
  FILES = path.join(dir, "files");
  fs.mkdirSync(FILES);
  fs.writeFileSync(path.join(FILES, "layout.png"), Buffer.from(PICTURE, "base64"));
  fs.writeFileSync(path.join(FILES, "lying.png"), "<!DOCTYPE html><script>parent.postMessage('pwned','*')</script>");
}
const SECRET = "tok-9f8e-s3cr3t-Zq7";
const SECRET_CALL = { questions: [
  { question: "Which region?", options: ["eu-west-1", "us-east-1"] },
  { question: "The deploy token?", isSecret: true },
] };

let failures = 0;
let passed = 0;
const measured = { sizes: new Set(), renders: [] };
function check(label, ok, detail = "") {
  console.log(`${ok ? "ok" : "FAILED"}: ${label}${ok || !detail ? "" : `: ${detail}`}`);
  if (ok) passed += 1;
  else failures += 1;
}
const load = (name) => import(pathToFileURL(path.join(MODULES, name)).href);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
async function until(what, seconds = 10) {
  const deadline = Date.now() + seconds * 1000;
  while (Date.now() < deadline) {
    const found = await what();
    if (found) return found;
    await sleep(20);
  }
  return null;
}

// What the model reads for an outcome, from askq itself, given the answers in its own form.
function resultText(call, answers, status) {
  const script = "import json, sys; sys.path.insert(0, sys.argv[1]); import askq\n" +
    "given = json.load(sys.stdin); out = askq.ask(given['call'])\n" +
    "answers = askq.collect_answers(out, given['answers'], partial=given['status'] != 'answered')\n" +
    "sys.stdout.write(askq.result_text(askq.QuestionOutput(out.questions, answers, given['status'])))";
  const run = spawnSync(PYTHON, ["-c", script, path.dirname(path.resolve(ASKQ))],
    { input: JSON.stringify({ call, answers, status }), encoding: "utf8" });
  if (run.status !== 0) throw new Error(`askq could not say the result: ${run.stderr}`);
  return run.stdout;
}

// --- the servers --------------------------------------------------------------

function startHttp(...extra) {
  const child = spawn(PYTHON, [ASKQ, "serve", "--http", "--port", "0", "--token", TOKEN, ...extra],
    { stdio: ["ignore", "ignore", "pipe"], env: { ...process.env, BROWSER: "true" } });
  let log = "";
  return new Promise((resolve, reject) => {
    child.stderr.on("data", (chunk) => {
      log += chunk;
      const found = /(http:\/\/\S+\/mcp)/.exec(log);
      if (found) resolve({ url: found[1], child, log: () => log });
    });
    child.on("exit", () => reject(new Error(`serve --http ended: ${log}`)));
  });
}

async function connectSdk1(kind, capabilities, extra = []) {
  const { Client } = await load("@modelcontextprotocol/sdk/dist/esm/client/index.js");
  const client = new Client({ name: "apps-check", version: "1" }, { capabilities });
  const seen = { notifications: [], log: () => "" };
  client.fallbackNotificationHandler = async (notification) => { seen.notifications.push(notification); };
  if (kind === "stdio") {
    const { StdioClientTransport } = await load("@modelcontextprotocol/sdk/dist/esm/client/stdio.js");
    const transport = new StdioClientTransport({ command: PYTHON, args: [ASKQ, "serve", ...extra], stderr: "pipe",
      env: { ...process.env, BROWSER: "true" } });
    let log = "";
    transport.stderr.on("data", (chunk) => { log += chunk; });
    seen.log = () => log;
    await client.connect(transport);
    return { client, seen, close: () => client.close() };
  }
  const server = await startHttp(...extra);
  const { StreamableHTTPClientTransport } = await load("@modelcontextprotocol/sdk/dist/esm/client/streamableHttp.js");
  const transport = new StreamableHTTPClientTransport(new URL(server.url),
    { requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } } });
  await client.connect(transport);
  seen.log = server.log;
  return { client, seen, close: async () => { await client.close(); server.child.kill(); } };
}

async function connectClient2(kind, capabilities) {
  const { Client, StreamableHTTPClientTransport } = await load("@modelcontextprotocol/client/dist/index.mjs");
  const client = new Client({ name: "apps-check-2", version: "2" },
    { capabilities, versionNegotiation: { mode: "auto" } });
  const seen = { notifications: [], log: () => "" };
  if (kind === "stdio") {
    const { StdioClientTransport } = await load("@modelcontextprotocol/client/dist/stdio.mjs");
    const transport = new StdioClientTransport({ command: PYTHON, args: [ASKQ, "serve"], stderr: "pipe" });
    let log = "";
    transport.stderr.on("data", (chunk) => { log += chunk; });
    seen.log = () => log;
    return { client, transport, seen, close: () => client.close() };
  }
  const server = await startHttp();
  const transport = new StreamableHTTPClientTransport(new URL(server.url),
    { requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } } });
  seen.log = server.log;
  return { client, transport, seen, close: async () => { await client.close(); server.child.kill(); } };
}

// --- the host page ------------------------------------------------------------

async function bridgeBundle(dir) {
  const require = createRequire(path.join(MODULES, "x.js"));
  const esbuild = require("esbuild");
  const entry = path.join(dir, "entry.mjs");
  fs.writeFileSync(entry, "import { AppBridge, PostMessageTransport } from '@modelcontextprotocol/ext-apps/app-bridge';\n" +
    "import { z } from 'zod/v4';\n" +
    "window.ExtApps = { AppBridge, PostMessageTransport, anyResult: z.record(z.string(), z.unknown()) };\n");
  const built = await esbuild.build({ entryPoints: [entry], bundle: true, format: "iife", platform: "browser",
    write: false, nodePaths: [MODULES], logLevel: "error" });
  return built.outputFiles[0].text;
}

// The host: the SDK's AppBridge with no client of its own; the view's tool calls
// and messages go to the test through functions the page exposes.
const HOST_SCRIPT = `
window.sizes = [];
// The frame a view is drawn in, sandboxed as hosts draw it.
function newFrame() {
  const frame = document.createElement("iframe");
  frame.setAttribute("sandbox", "allow-scripts");
  frame.title = "askq";
  frame.style.height = "80px";
  document.getElementById("host").appendChild(frame);
  return frame;
}
window.startView = async function (viewHtml, toolArguments, result, context) {
  const { AppBridge, PostMessageTransport } = window.ExtApps;
  const frame = newFrame();
  const bridge = new AppBridge(null, { name: "apps-check-host", version: "1" },
    { serverTools: {}, message: { text: {} }, logging: {} }, { hostContext: context });
  bridge.oncalltool = async (params) => window.hostCallTool(params);
  bridge.onmessage = async (params) => ((await window.hostMessage(params)) ? { isError: true } : {});
  bridge.onsizechange = (params) => {
    window.sizes.push(params);
    if (params.height) { frame.style.height = params.height + "px"; }
  };
  bridge.oninitialized = async () => {
    await bridge.sendToolInput({ arguments: toolArguments });
    await bridge.sendToolResult(result);
  };
  await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
  window.bridge = bridge;
  frame.srcdoc = viewHtml;
};
// A form drawn by the view (SEP-3118): forwarded once the view has initialized, its
// ElicitResult handed to the test as it came.
window.startForm = async function (viewHtml, form, context) {
  const { AppBridge, PostMessageTransport, anyResult } = window.ExtApps;
  const frame = newFrame();
  const bridge = new AppBridge(null, { name: "apps-check-host", version: "1" },
    { serverTools: {}, logging: {}, elicitation: {} }, { hostContext: context });
  bridge.oncalltool = async (params) => window.hostCallTool(params);
  bridge.onsizechange = (params) => { if (params.height) { frame.style.height = params.height + "px"; } };
  // The published AppBridge keeps only the capabilities it knows: the view's own
  // ui/initialize says whether it answers forms, and only then is one forwarded.
  window.addEventListener("message", (event) => {
    const message = event.data;
    if (event.source === frame.contentWindow && message && message.method === "ui/initialize") {
      window.appCapabilities = message.params && message.params.appCapabilities;
    }
  });
  bridge.oninitialized = async () => {
    if (!(window.appCapabilities && window.appCapabilities.elicitation)) {
      await window.hostFormAnswer({ failed: "the view did not declare appCapabilities.elicitation" });
      return;
    }
    try {
      const answer = await bridge.request({ method: "elicitation/create", params: form }, anyResult, { timeout: 120000 });
      await window.hostFormAnswer(answer);
    } catch (error) {
      await window.hostFormAnswer({ failed: String(error) });
    }
  };
  await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
  window.bridge = bridge;
  frame.srcdoc = viewHtml;
};`;

class Host {
  constructor(browser, bundle) {
    this.browser = browser;
    this.bundle = bundle;
  }

  async open(client, width, theme, styles) {
    const page = await this.browser.newPage();
    await page.setViewport({ width, height: 900 });
    this.page = page;
    this.messages = [];
    this.requests = [];
    this.dialogs = [];
    this.consoleErrors = [];
    await page.setRequestInterception(true);
    page.on("request", (request) => {
      if (request.url().startsWith("data:")) {  // a preview of the person's own picture, from its bytes: nothing leaves
        request.continue().catch(() => {});
        return;
      }
      if (!request.url().startsWith("about:")) this.requests.push(request.url());
      request.abort().catch(() => {});
    });
    page.on("dialog", (dialog) => { this.dialogs.push(dialog.message()); dialog.dismiss().catch(() => {}); });
    page.on("console", (message) => {
      if (message.type() === "error") this.consoleErrors.push(message.text());
    });
    await page.exposeFunction("hostCallTool", (params) => client.callTool(params));
    this.formAnswers = [];
    await page.exposeFunction("hostFormAnswer", (answer) => { this.formAnswers.push(answer); });
    this.refuseNext = false;
    await page.exposeFunction("hostMessage", (params) => {
      if (this.refuseNext) {  // the conversation did not take it: the view must keep the person's entries
        this.refuseNext = false;
        return true;
      }
      this.messages.push(params);
      return false;
    });
    await page.setContent(`<!DOCTYPE html><html><head><meta charset="utf-8"><style>body{margin:0}` +
      `iframe{border:0;width:100%;display:block}</style></head><body><div id="host"></div>` +
      `<script>${this.bundle}</script><script>${HOST_SCRIPT}</script></body></html>`);
    this.context = { theme, platform: width < 500 ? "mobile" : "desktop", locale: "en-US",
      containerDimensions: { maxHeight: 4000, width }, ...(styles ? { styles } : {}) };
    return page;
  }

  async show(viewHtml, toolArguments, result) {
    const started = Date.now();
    await this.page.evaluate((html, given, done, context) => window.startView(html, given, done, context),
      viewHtml, toolArguments, result, this.context);
    this.frame = await until(async () => this.page.frames().find((frame) => frame !== this.page.mainFrame()));
    await this.frame.waitForSelector("fieldset", { timeout: 10000 });
    measured.renders.push(Date.now() - started);
    return this.frame;
  }

  async message(seconds = 10) {
    return until(async () => this.messages.length && this.messages[this.messages.length - 1], seconds);
  }

  async close() {
    const page = this.page;
    this.page = null;
    await page.close();
  }
}

// --- the view -----------------------------------------------------------------

async function callForView(client, call) {
  const result = await client.callTool({ name: "ask_questions", arguments: call });
  const read = await client.readResource({ uri: "ui://askq/questions" });
  measured.sizes.add(Buffer.byteLength(read.contents[0].text));
  return { result, html: read.contents[0].text };
}

const pick = (id, label) => `input[name="q:${id}"][value="${label}"]`;

// Each case: what the person does in the view, and the same answers in askq's own form.
const CASES = {
  "picks, typed text and a note": {
    async act(frame) {
      await frame.click(pick("q0", CUSTOM));
      await frame.type('input[name="other:q0"]', "MariaDB 11");
      await frame.click(pick("q1", "Lint"));
      await frame.click(pick("q1", "Unit tests"));
      await frame.click('fieldset#question-1 details.addnote summary');
      await frame.type('textarea[name="note:q1"]', "run them twice");
      await frame.type('textarea[name="text:q2"]', "billing");
      await frame.click('button[data-action="submit"]');
    },
    answers: [{ id: "q0", answer: "MariaDB 11", selected: [CUSTOM] },
      { id: "q1", selected: ["Unit tests", "Lint"], note: "run them twice" }, { id: "q2", answer: "billing" }],
    status: "answered",
  },
  "you decide, let's discuss, and a skip": {
    async act(frame) {
      await frame.click('input[name="state:q0"][value="you_decide"]');
      await frame.click('input[name="state:q1"][value="discuss"]');
      await frame.click('fieldset#question-1 details.addnote summary');
      await frame.type('textarea[name="note:q1"]', "call me");
      await frame.click('button[data-action="submit"]');
    },
    answers: [{ id: "q0", unanswered: "you_decide" }, { id: "q1", unanswered: "discuss", note: "call me" },
      { id: "q2", unanswered: "skipped" }],
    status: "answered",
  },
  "a refused submission, then fixed": {
    async act(frame, host) {
      await frame.click('button[data-action="submit"]');
      await frame.waitForSelector("#problems", { timeout: 10000 });
      if (SHOTS) await host.page.screenshot({ path: path.join(SHOTS, `refused-${Date.now()}.png`), fullPage: true });
      const shown = await frame.$$eval(".error[id^=problem-]", (nodes) => nodes.map((node) => node.textContent));
      check("the refused submission shows each problem beside its question, in the person's words",
        shown.length === 2 && shown.every((words) => words === "This question needs an answer."), JSON.stringify(shown));
      const focused = await frame.evaluate(() => document.activeElement && document.activeElement.id);
      check("the problems take the focus", focused === "problems", focused);
      check("a refused submission sends no message", host.messages.length === 0);
      await frame.click(pick("q0", "SQLite"));
      await frame.click(pick("q1", "Lint"));
      await frame.click('button[data-action="submit"]');
    },
    answers: [{ id: "q0", selected: ["SQLite"] }, { id: "q1", selected: ["Lint"] }],
    status: "answered",
  },
  "a message the conversation refuses once, then takes": {
    async act(frame, host) {
      await frame.click(pick("q0", "SQLite"));
      await frame.click(pick("q1", "Type check"));
      host.refuseNext = true;
      await frame.click('button[data-action="submit"]');
      await frame.waitForFunction(() => /could not be sent/.test(document.getElementById("said").textContent),
        { timeout: 10000 });
      const kept = await frame.$eval(pick("q0", "SQLite"), (node) => node.checked);
      check("a refused message leaves the form as the person left it, and says so", kept && !host.refuseNext);
      await frame.click('button[data-action="submit"]');
    },
    answers: [{ id: "q0", selected: ["SQLite"] }, { id: "q1", selected: ["Type check"] }],
    status: "answered",
  },
  "a picture attached, a lying file refused and removed": {
    async act(frame, host) {
      await frame.click(pick("q0", "SQLite"));
      await frame.click(pick("q1", "Lint"));
      const input = await frame.$('input[name="file:q0"]:not(.camera)');
      await input.uploadFile(path.join(FILES, "layout.png"), path.join(FILES, "lying.png"));
      await frame.waitForFunction(() => document.querySelectorAll("fieldset#question-0 ul.picked li").length === 2,
        { timeout: 10000 });
      const previews = await frame.$$eval("fieldset#question-0 ul.picked img", (nodes) => nodes.map((node) => node.src.slice(0, 22)));
      check("the picture is previewed from its bytes, the lying file is not",
        previews.length === 1 && previews[0] === "data:image/png;base64,", JSON.stringify(previews));
      await frame.click('button[data-action="submit"]');
      await frame.waitForSelector("#problems", { timeout: 10000 });
      const said = await frame.$eval("#problem-0", (node) => node.textContent);
      check("the lying file is refused by the server in the page's words, and nothing is sent",
        /^That file is not one this page takes/.test(said) && host.messages.length === 0, said);
      const kept = await frame.$$eval("fieldset#question-0 ul.picked li", (nodes) => nodes.map((node) => node.textContent));
      check("the refused form keeps the files and the picks", kept.length === 2 &&
        (await frame.$eval(pick("q0", "SQLite"), (node) => node.checked)), JSON.stringify(kept));
      if (SHOTS) await host.page.screenshot({ path: path.join(SHOTS, `attached-${Date.now()}.png`), fullPage: true });
      const buttons = await frame.$$("fieldset#question-0 ul.picked li button");
      await buttons[1].click();
      await frame.click('button[data-action="submit"]');
    },
    answers: [{ id: "q0", selected: ["SQLite"], attachments: [{ name: "layout.png", data: PICTURE }] },
      { id: "q1", selected: ["Lint"] }],
    files: [{ type: "image", mimeType: "image/png", data: PICTURE }],
    status: "answered",
  },
  "ask me more first": {
    async act(frame) {
      await frame.click(pick("q0", "SQLite"));
      await frame.click('button[data-action="follow_up"]');
    },
    answers: [{ id: "q0", selected: ["SQLite"] }],
    status: "follow_up",
  },
  "a dismissal in two steps, keeping what was typed": {
    async act(frame) {
      await frame.type('textarea[name="text:q2"]', "billing");
      await frame.click('button[data-show="confirm"]');
      await frame.waitForSelector("#confirm:not([hidden])", { timeout: 5000 });
      await frame.click('button[data-action="dismiss"]');
    },
    answers: [{ id: "q2", answer: "billing" }],
    status: "declined",
  },
};

async function looks(frame, theme, width, label, styles) {
  const seen = await frame.evaluate(() => ({
    sideways: document.documentElement.scrollWidth - document.documentElement.clientWidth,
    background: getComputedStyle(document.body).backgroundColor,
    font: getComputedStyle(document.body).fontFamily,
    color: getComputedStyle(document.body).color,
    theme: document.documentElement.dataset.theme,
    height: Math.ceil(document.body.getBoundingClientRect().height),
  }));
  check(`${label}: nothing scrolls sideways at ${width} px`, seen.sideways <= 0, `${seen.sideways} px`);
  const wanted = styles ? "rgb(250, 249, 245)" : theme === "dark" ? "rgb(13, 17, 23)" : "rgb(255, 255, 255)";
  check(`${label}: the host's ${theme} theme`, seen.theme === theme && seen.background === wanted,
    `${seen.theme} ${seen.background}`);
  if (styles) {
    check(`${label}: the host's font and text colour`, seen.font.includes("Host Test Sans") && seen.color === "rgb(20, 20, 19)",
      `${seen.font} ${seen.color}`);
  }
  return seen;
}

async function viewRound(kind, width, theme) {
  const styles = theme === "light" && width > 500
    ? { variables: { "--color-background-primary": "rgb(250, 249, 245)", "--color-text-primary": "rgb(20, 20, 19)",
      "--font-sans": "\"Host Test Sans\", sans-serif" } } : null;
  const where = `${kind}, ${width} px, ${theme}${styles ? " with host styles" : ""}`;
  const mcp = await connectSdk1(kind, { extensions: APPS });
  try {
    const tools = await mcp.client.listTools();
    const names = tools.tools.map((tool) => tool.name);
    check(`${where}: the tool carries the view, and the app-only tool is listed`,
      tools.tools[0]._meta?.ui?.resourceUri === "ui://askq/questions" && names.join() === "ask_questions,ask_questions_view" &&
      tools.tools[1]._meta?.ui?.visibility?.join() === "app", JSON.stringify(tools.tools.map((tool) => tool._meta)));
    const host = new Host(browser, bundle);
    const rounds = Object.entries(CASES).map(([name, spec]) =>
      [name, () => viewCase(mcp.client, host, where, name, spec, width, theme, styles)]);
    rounds.push(["the hostile call", () => hostileRound(mcp.client, host, where, width, theme)]);
    rounds.push(["the number field", () => numberRound(mcp.client, host, where, width, theme)]);
    for (const [name, round] of rounds) {
      try {
        await round();
      } catch (err) {
        check(`${where}: ${name}`, false, err.message);
      } finally {
        if (host.page) await host.close();
      }
    }
    const logged = mcp.seen.log();
    check(`${where}: the server wrote no traceback`, !/Traceback/.test(logged), logged);
  } finally {
    await mcp.close();
  }
}

// One thing a person does in the view, from the call to the message the host gets.
async function viewCase(client, host, where, name, spec, width, theme, styles) {
  const { result, html } = await callForView(client, EXAMPLE);
  check(`${where}: the call is answered at once, telling the model to end its turn`,
    /next message/.test(result.content[0].text) && /End your turn now/.test(result.content[0].text) &&
    result.structuredContent.questions.length === 3 && result.structuredContent.status === undefined);
  await host.open(client, width, theme, styles);
  const frame = await host.show(html, EXAMPLE, result);
  if (name === Object.keys(CASES)[0]) {
    const seen = await looks(frame, theme, width, `${where}: the example`, styles);
    if (SHOTS) await host.page.screenshot({ path: path.join(SHOTS, `${where.replace(/[^a-z0-9]+/g, "-")}.png`), fullPage: true });
    const framed = await host.page.$eval("iframe", (node) => node.getBoundingClientRect().height);
    check(`${where}: the frame is fitted to the view's reported size`,
      Math.abs(framed - seen.height) <= 2 && (await host.page.evaluate(() => window.sizes.length)) > 0,
      `frame ${framed}, view ${seen.height}`);
    if (theme === "light") {
      await host.page.evaluate(() => window.bridge.setHostContext({ theme: "dark" }));
      const changed = await until(() => frame.evaluate(() => document.documentElement.dataset.theme === "dark"), 5);
      check(`${where}: a change of the host's theme is followed`, Boolean(changed));
    }
  }
  await spec.act(frame, host);
  const message = await host.message();
  const wanted = resultText(EXAMPLE, spec.answers, spec.status);
  const text = message && message.content && message.content[0] && message.content[0].text;
  check(`${where}: ${name}: the ui/message from the user is result_text() of the outcome`,
    message && message.role === "user" && message.content[0].type === "text" && text === wanted,
    `\n--- sent:\n${text}\n--- wanted:\n${wanted}`);
  const blocks = (message ? message.content.slice(1) : []).map((block) => [block.type, block.mimeType, block.data].join());
  const wantedBlocks = (spec.files || []).map((block) => [block.type, block.mimeType, block.data].join());
  check(`${where}: ${name}: the files attached follow the text as content blocks`,
    blocks.join("|") === wantedBlocks.join("|"), blocks.join("|").slice(0, 300));
  check(`${where}: ${name}: one message, no request, no dialog`,
    host.messages.length === 1 && host.requests.length === 0 && host.dialogs.length === 0,
    JSON.stringify({ messages: host.messages.length, requests: host.requests, dialogs: host.dialogs }));
}

// The view's number field is the page's: text with a decimal keyboard, its range
// beside it, read by the server's rule (a decimal comma kept, "1,000" refused).
async function numberRound(client, host, where, width, theme) {
  const { result, html } = await callForView(client, NUMBER_CALL);
  await host.open(client, width, theme);
  const frame = await host.show(html, NUMBER_CALL, result);
  const field = 'input[name="text:n"]';
  const kind = await frame.$eval(field, (node) => [node.type, node.inputMode].join());
  check(`${where}: the number field is a text field with a decimal keyboard`, kind === "text,decimal", kind);
  const takes = await frame.$eval("#takes-0", (node) => node.textContent);
  check(`${where}: the number's range and step are beside it before anything is sent`,
    takes === "Type one number from 1 to 64 GB in steps of 0.5.", takes);
  await frame.type(field, "1,000");
  await frame.click('button[data-action="submit"]');
  await frame.waitForSelector("#problems", { timeout: 10000 });
  const shown = await frame.$eval("#problem-0", (node) => node.textContent);
  check(`${where}: "1,000" is refused as ambiguous, in the dialog's words, and sends no message`,
    shown.startsWith("That could be read two ways") && host.messages.length === 0, shown);
  await frame.$eval(field, (node) => { node.value = ""; });
  await frame.type(field, "3,5");
  const kept = await frame.$eval(field, (node) => node.value);
  check(`${where}: the number field keeps a decimal comma as typed`, kept === "3,5", kept);
  await frame.click('button[data-action="submit"]');
  const message = await host.message();
  const text = message && message.content && message.content[0] && message.content[0].text;
  const wanted = resultText(NUMBER_CALL, [{ id: "n", answer: "3,5" }], "answered");
  check(`${where}: the number reaches the model in one written form`,
    text === wanted && text.includes('typed: "3.5 GB"'), `\n--- sent:\n${text}\n--- wanted:\n${wanted}`);
}

async function hostileRound(client, host, where, width, theme) {
  const { result, html } = await callForView(client, HOSTILE);
  await host.open(client, width, theme);
  const frame = await host.show(html, HOSTILE, result);
  await sleep(300);  // time for anything the model's text might have started
  await looks(frame, theme, width, `${where}: the hostile call`);
  const seen = await frame.evaluate(() => ({
    text: document.body.innerText,
    scripts: document.scripts.length,
    foreign: document.querySelectorAll("main img, main svg, main iframe, main a[href^=http], main style, main script").length,
    autofocus: document.querySelectorAll("[onfocus], [onerror], [onload]").length,
  }));
  check(`${where}: the hostile call: model text is text, and none of it runs`,
    seen.scripts === 1 && seen.foreign === 0 && seen.autofocus === 0 && seen.text.includes("<script>parent.postMessage") &&
    host.messages.length === 0 && host.dialogs.length === 0, JSON.stringify({ ...seen, text: undefined, dialogs: host.dialogs }));
  check(`${where}: the hostile call: U+202E is shown as an escape`,
    seen.text.includes("evil \\u202eedoc\\u202c") && !seen.text.includes("\u202e"));
  check(`${where}: the hostile call: no request leaves the frame`, host.requests.length === 0, host.requests.join(" "));
  check(`${where}: no policy refused the view's own style or script`,
    !host.consoleErrors.some((error) => /Content Security Policy/.test(error)), host.consoleErrors.join(" | "));
}

// A host that draws forms and views keeps forms; its view has nothing to answer.
async function formsRound(kind) {
  const where = `${kind}, a host with forms and views`;
  const mcp = await connectSdk1(kind, { extensions: APPS, elicitation: { form: {} } });
  const { ElicitRequestSchema } = await load("@modelcontextprotocol/sdk/dist/esm/types.js");
  const forms = [];
  mcp.client.setRequestHandler(ElicitRequestSchema, async (request) => {
    forms.push(request.params);
    return { action: "accept", content: { q0: "SQLite", q1: ["Lint"], q2: "billing" } };
  });
  const host = new Host(browser, bundle);
  try {
    const { result, html } = await callForView(mcp.client, EXAMPLE);
    const wanted = resultText(EXAMPLE, [{ id: "q0", selected: ["SQLite"] }, { id: "q1", selected: ["Lint"] },
      { id: "q2", answer: "billing" }], "answered");
    check(`${where}: the call is asked in the client's form, and the model reads its answers`,
      forms.length === 1 && forms[0].requestedSchema && result.content[0].text === wanted, result.content[0].text);
    await host.open(mcp.client, 1280, "light");
    await host.page.evaluate((view, given, done, context) => window.startView(view, given, done, context),
      html, EXAMPLE, result, host.context);
    const frame = await until(async () => host.page.frames().find((one) => one !== host.page.mainFrame()));
    const said = await until(() => frame.evaluate(() => document.body.innerText.includes("Nothing to answer here"))
      .catch(() => false), 10);  // the frame's first document gives way to the view's
    check(`${where}: the view says there is nothing to answer, and sends nothing`,
      Boolean(said) && host.messages.length === 0 && host.requests.length === 0);
    console.log(`model read (${where}): ${JSON.stringify(result.content[0].text.split("\n").slice(0, 4).join(" | "))}`);
  } finally {
    if (host.page) await host.close();
    await mcp.close();
  }
}

// A host that draws forms with the view (SEP-3118): the form names the view, which the
// host draws and forwards the form to; what the person does there is the form's answer.
const VIEWS_FORMS = { elicitation: { form: {} },
  extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"], elicitation: {} } } };
const FORM_CASES = {
  "picks and typed text": {
    async act(frame) {
      await frame.click(pick("q0", "SQLite"));
      await frame.click(pick("q1", "Lint"));
      await frame.type('textarea[name="text:q2"]', "billing");
      await frame.click('button[data-action="submit"]');
    },
    answers: [{ id: "q0", selected: ["SQLite"] }, { id: "q1", selected: ["Lint"] }, { id: "q2", answer: "billing" }],
    status: "answered",
  },
  "a refused submission, then fixed": {
    async act(frame) {
      await frame.click('button[data-action="submit"]');
      await frame.waitForSelector("#problems", { timeout: 10000 });
      await frame.click(pick("q0", "PostgreSQL"));
      await frame.click(pick("q1", "Unit tests"));
      await frame.click('button[data-action="submit"]');
    },
    answers: [{ id: "q0", selected: ["PostgreSQL"] }, { id: "q1", selected: ["Unit tests"] }, { id: "q2", unanswered: "skipped" }],
    status: "answered",
  },
  "a dismissal": {
    async act(frame) {
      await frame.click(pick("q0", "SQLite"));
      await frame.click('button[data-show="confirm"]');
      await frame.click('button[data-action="dismiss"]');
    },
    answers: [],
    status: "declined",
  },
};

async function appFormRound(kind, name, spec) {
  const where = `${kind}, a host that draws forms with the view (SEP-3118), ${name}`;
  const mcp = await connectSdk1(kind, VIEWS_FORMS);
  const { ElicitRequestSchema } = await load("@modelcontextprotocol/sdk/dist/esm/types.js");
  const host = new Host(browser, bundle);
  const seen = { forms: [], drawn: null };
  mcp.client.setRequestHandler(ElicitRequestSchema, async (request) => {
    seen.forms.push(request.params);
    const uri = request.params._meta?.ui?.resourceUri;
    if (!uri) return { action: "cancel" };
    const read = await mcp.client.readResource({ uri });
    await host.open(mcp.client, 1280, "light");
    await host.page.evaluate((view, form, context) => window.startForm(view, form, context),
      read.contents[0].text, request.params, host.context);
    const frame = await until(async () => host.page.frames().find((one) => one !== host.page.mainFrame()));
    await frame.waitForSelector("fieldset", { timeout: 10000 });
    seen.drawn = await frame.evaluate(() => ({
      followUp: Boolean(document.querySelector('button[data-action="follow_up"]')),
      notes: document.querySelectorAll("details.addnote").length,
    }));
    seen.app = await host.page.evaluate(() => window.appCapabilities);
    await spec.act(frame);
    const answer = await until(async () => host.formAnswers[0], 20);
    await frame.waitForFunction(() => !document.querySelector("form"), { timeout: 10000 }).catch(() => {});
    return answer || { action: "cancel" };
  });
  try {
    const result = await mcp.client.callTool({ name: "ask_questions", arguments: EXAMPLE });
    const wanted = resultText(EXAMPLE, spec.answers, spec.status);
    const form = seen.forms[0] || {};
    check(`${where}: one form, naming the view, and whole for a host that falls back to its own`,
      seen.forms.length === 1 && form._meta?.ui?.resourceUri === "ui://askq/questions" && Boolean(form.requestedSchema),
      JSON.stringify(form._meta?.ui));
    check(`${where}: the view declared that it answers forms (appCapabilities.elicitation)`,
      Boolean(seen.app && seen.app.elicitation), JSON.stringify(seen.app));
    check(`${where}: the view draws it with no "ask me more" and no notes, which a form's answer cannot carry`,
      seen.drawn && !seen.drawn.followUp && seen.drawn.notes === 0, JSON.stringify(seen.drawn));
    check(`${where}: the view's answer is the form's answer, and the model reads result_text() of it`,
      result.content[0].text === wanted && !host.formAnswers.some((answer) => answer.failed),
      JSON.stringify({ got: result.content[0].text, wanted, answers: host.formAnswers }));
    check(`${where}: no message went to the conversation and no request left the frame`,
      host.messages.length === 0 && host.requests.length === 0, JSON.stringify({ messages: host.messages, requests: host.requests }));
    console.log(`model read (${where}): ${JSON.stringify(result.content[0].text.split("\n").slice(0, 4).join(" | "))}`);
  } finally {
    if (host.page) await host.close();
    await mcp.close();
  }
}

// The official Inspector's web client with askq over stdio: the call's form drawn by
// askq's view in the Inspector's own app frame, answered there as a person would.
function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => { const { port } = server.address(); server.close(() => resolve(port)); });
  });
}

async function startInspector(dir) {
  const env = { ...process.env, BROWSER: "none", MCP_INSPECTOR_SECRET_STORE: "memory", CLIENT_PORT: String(await freePort()),
    MCP_SANDBOX_PORT: String(await freePort()), MCP_APP_ORIGIN_PORT: String(await freePort()) };
  const child = spawn(process.execPath, [path.join(dir, "clients", "launcher", "build", "index.js"), "--web",
    "--transport", "stdio", PYTHON, ASKQ, "serve", "--store", "memory"], { stdio: ["ignore", "pipe", "pipe"], env });
  let log = "";
  const url = await new Promise((resolve, reject) => {
    const take = (chunk) => {
      log += chunk;
      const found = /(http:\/\/127\.0\.0\.1:\d+\?MCP_INSPECTOR_API_TOKEN=\w+)/.exec(log);
      if (found) resolve(found[1]);
    };
    child.stdout.on("data", take);
    child.stderr.on("data", take);
    child.on("exit", () => reject(new Error(`the Inspector ended: ${log}`)));
    setTimeout(() => reject(new Error(`the Inspector did not start: ${log}`)), 30000);
  });
  return { url, child, log: () => log };
}

async function inspectorRound() {
  const dir = path.join(MODULES, "@modelcontextprotocol", "inspector");
  if (!fs.existsSync(dir)) {
    console.log("skipped: the official Inspector: DIR holds no @modelcontextprotocol/inspector");
    return;
  }
  const version = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")).version;
  const where = `the official Inspector ${version} (web client, askq over stdio)`;
  const inspector = await startInspector(dir);
  const page = await browser.newPage();
  try {
    await page.setViewport({ width: 1400, height: 1000 });
    await page.goto(inspector.url, { waitUntil: "networkidle2" });
    await (await page.waitForSelector('[role="switch"], input[type="checkbox"]', { timeout: 20000 })).click();
    await page.waitForFunction(() => /\bConnected\b/.test(document.body.innerText), { timeout: 30000 });
    const listed = await until(async () => {  // the tab answers once the server's lists are in
      await page.click('label[for$="-Tools"]').catch(() => {});
      await sleep(300);
      return page.$("::-p-text(ask_questions)");
    }, 30);
    if (!listed) throw new Error("the Inspector's Tools tab never listed ask_questions");
    await listed.click();
    await (await page.waitForSelector("::-p-text(Edit as JSON)", { timeout: 20000 })).click();
    const editor = await page.waitForSelector("textarea.ace_text-input", { timeout: 20000 });
    await editor.focus();
    await page.keyboard.down("Control");
    await page.keyboard.press("a");
    await page.keyboard.up("Control");
    await page.keyboard.press("Backspace");
    await editor.type(JSON.stringify(EXAMPLE));
    await (await page.waitForSelector("::-p-text(Execute Tool)", { timeout: 20000 })).click();
    const view = await until(async () => {
      const frame = page.frames().find((one) => one.url() === "about:srcdoc");
      return frame && (await frame.$("fieldset").catch(() => null)) ? frame : null;
    }, 30);
    const said = await page.evaluate(() => document.body.innerText);
    check(`${where}: the call's form is drawn by askq's view in the Inspector's app frame`,
      Boolean(view) && said.includes("Answering through the server-provided MCP App."), said.slice(-600));
    if (!view) return;
    const drawn = await view.evaluate(() => ({
      followUp: Boolean(document.querySelector('button[data-action="follow_up"]')),
      notes: document.querySelectorAll("details.addnote").length }));
    check(`${where}: drawn as a form: no "ask me more", no notes`, !drawn.followUp && drawn.notes === 0, JSON.stringify(drawn));
    await view.click(pick("q0", "SQLite"));
    await view.click(pick("q1", "Lint"));
    await view.type('textarea[name="text:q2"]', "billing");
    await view.click('button[data-action="submit"]');
    const wanted = resultText(EXAMPLE, [{ id: "q0", selected: ["SQLite"] }, { id: "q1", selected: ["Lint"] },
      { id: "q2", answer: "billing" }], "answered");
    const flat = (text) => text.replace(/\s+/g, " ").trim();
    const shown = await until(async () => {
      const text = await page.evaluate(() => document.body.innerText);
      return flat(text).includes(flat(wanted)) ? text : null;
    }, 30);
    check(`${where}: the Inspector's result is result_text() of what the person did in the view`, Boolean(shown),
      (await page.evaluate(() => document.body.innerText)).slice(0, 1500));
    console.log(`model read (${where}): ${JSON.stringify(wanted.split("\n").slice(0, 4).join(" | "))}`);
  } catch (err) {
    if (SHOTS) await page.screenshot({ path: path.join(SHOTS, "inspector-failed.png") }).catch(() => {});
    throw new Error(`${err.message}; the Inspector showed: ${(await page.evaluate(() => document.body.innerText)
      .catch(() => "")).slice(0, 800)}; its log: ${inspector.log().slice(-800)}`);
  } finally {
    await page.close();
    inspector.child.kill();
  }
}

// --- the page by URL ----------------------------------------------------------

// The URL handler of a client: opens the page in the browser and answers it as a person.
function urlHandler(asked, people) {
  return async (request) => {
    const params = request.params;
    asked.push(params);
    if (params.mode !== "url") throw new Error(`a ${params.mode} form was sent: ${JSON.stringify(params)}`);
    people.push((async () => {
      const page = await browser.newPage();
      try {
        await page.goto(params.url);
        const secret = await page.$('textarea[name="text:q1"], input[name="text:q1"]');
        if (secret) {
          await page.click(pick("q0", "us-east-1"));
          await page.type('[name="text:q1"]', SECRET);
        } else {
          await page.click(pick("q0", "SQLite"));
          await page.click(pick("q1", "Lint"));
        }
        await Promise.all([page.waitForNavigation(), page.click('button[value="submit"]')]);
        return await page.evaluate(() => document.body.innerText);
      } finally {
        await page.close();
      }
    })());
    return { action: "accept" };
  };
}

async function urlRound(label, connect, expectComplete, call = SECRET_CALL) {
  const asked = [];
  const people = [];
  const mcp = await connect();
  try {
    const { ElicitRequestSchema } = label.includes("2026") ? {} : await load("@modelcontextprotocol/sdk/dist/esm/types.js");
    mcp.client.setRequestHandler(ElicitRequestSchema || "elicitation/create", urlHandler(asked, people));
    if (mcp.transport) await mcp.client.connect(mcp.transport);
    const result = await mcp.client.callTool({ name: "ask_questions", arguments: call });
    const sentPage = await people[0];
    const text = result.content[0].text;
    const secret = call === SECRET_CALL;
    const wanted = secret ? `"${SECRET}"` : 'picked: "SQLite"';
    check(`${label}: the page was sent by URL and answered there; the model read the answers`,
      asked.length === 1 && asked[0].mode === "url" && text.includes(wanted) && text.startsWith("The user answered"),
      JSON.stringify({ asked, text }));
    if (expectComplete) {
      const done = mcp.seen.notifications.filter((note) => note.method === "notifications/elicitation/complete");
      check(`${label}: the server said the page was done`,
        done.length === 1 && done[0].params.elicitationId === asked[0].elicitationId, JSON.stringify(mcp.seen.notifications));
    }
    if (secret) {
      const elsewhere = JSON.stringify(asked) + JSON.stringify(mcp.seen.notifications) + mcp.seen.log();
      check(`${label}: the secret is in the model's result and in nothing else the client or the log saw`,
        !elsewhere.includes(SECRET) && !asked[0].requestedSchema);
      console.log(`note: ${label}: the page after sending ${sentPage.includes(SECRET) ? "shows" : "does not show"} the secret`);
    }
    console.log(`model read (${label}): ${JSON.stringify(text.split("\n").slice(0, 6).join(" | "))}`);
  } finally {
    await mcp.close();
  }
}

// The mcp SDK's own client (tools/apps_check_client.py, in the Python that MCP_PYTHON
// names), whose URL handler tells this script the URL; the page is opened and answered
// in the browser, and the client told that it was opened.
async function pythonUrlRound(label, mode, kind) {
  let server = null;
  if (kind === "http") server = await startHttp();
  const client = spawn(process.env.MCP_PYTHON, [path.join(ROOT, "tools", "apps_check_client.py"), mode,
    server ? server.url : "stdio", ASKQ, TOKEN], { stdio: ["pipe", "pipe", "pipe"] });
  let log = "";
  client.stderr.on("data", (chunk) => { log += chunk; });
  const lines = [];
  let buffered = "";
  client.stdout.on("data", (chunk) => {
    buffered += chunk;
    for (let at = buffered.indexOf("\n"); at >= 0; at = buffered.indexOf("\n")) {
      lines.push(JSON.parse(buffered.slice(0, at)));
      buffered = buffered.slice(at + 1);
    }
  });
  try {
    const asked = await until(async () => lines.find((line) => line.asked), 20);
    if (!asked) throw new Error(`the client asked nothing: ${log}`);
    const params = asked.asked;
    const page = await browser.newPage();
    await page.setViewport({ width: kind === "stdio" ? 320 : 1280, height: 800 });  // a phone's width, and a desktop's
    await page.goto(params.url);
    client.stdin.write("opened\n");
    await page.click(pick("q0", "us-east-1"));
    const picture = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "askq-picture-")), "layout.png");
    fs.writeFileSync(picture, Buffer.from(PICTURE, "base64"));
    await (await page.$("#file-0")).uploadFile(picture);
    await page.type('[name="text:q1"]', SECRET);
    await Promise.all([page.waitForNavigation(), page.click('button[value="submit"]')]);
    await page.close();
    const done = await until(async () => lines.find((line) => line.text !== undefined), 20);
    if (!done) throw new Error(`the call did not end: ${log}`);
    const era = mode === "legacy" ? "2025-11-25" : "2026-07-28";
    check(`${label}: the page was sent by URL under ${era} and answered in the browser; the model read the answers`,
      params.mode === "url" && done.version === era && done.text.includes(`typed: "${SECRET}"`) &&
      done.text.includes('picked: "us-east-1"'), JSON.stringify({ params, done }));
    const size = Buffer.from(PICTURE, "base64").length;
    check(`${label}: a picture attached on the page reached the client as an image block after the text, and the text names it`,
      JSON.stringify(done.blocks) === JSON.stringify([{ type: "text" }, { type: "image", mimeType: "image/png", bytes: size }]) &&
      done.text.includes('attached: "layout.png" (image/png'), JSON.stringify(done.blocks));
    if (mode === "legacy") {
      check(`${label}: the server said the page was done`, done.notes.some((note) =>
        note.method === "notifications/elicitation/complete" && note.params.elicitationId === params.elicitationId),
      JSON.stringify(done.notes));
    }
    const elsewhere = JSON.stringify(params) + JSON.stringify(done.notes) + log + (server ? server.log() : "");
    check(`${label}: the secret is in the model's result and in nothing else the client or the log saw`,
      !elsewhere.includes(SECRET) && !params.requestedSchema);
    console.log(`model read (${label}): ${JSON.stringify(done.text.split("\n").slice(0, 6).join(" | "))}`);
  } finally {
    client.kill();
    if (server) server.child.kill();
  }
}

// A client with neither forms, views nor URL mode, under serve --web: the server opens
// the page itself and logs where it is; the person answers it there.
async function openedPageRound(kind) {
  const label = `the page opened by the server (serve --web), @modelcontextprotocol/sdk with no forms over ${kind}`;
  const mcp = await connectSdk1(kind, {}, ["--web"]);
  try {
    const calling = mcp.client.callTool({ name: "ask_questions", arguments: EXAMPLE });
    const logged = await until(async () => mcp.seen.notifications.find((note) => note.method === "notifications/message"));
    if (!logged) throw new Error("the server logged no page to the client");
    const url = /(http:\/\/\S+)/.exec(logged.params.data)[1];
    const page = await browser.newPage();
    await page.goto(url);
    await page.click(pick("q0", "SQLite"));
    await page.click(pick("q1", "Lint"));
    await Promise.all([page.waitForNavigation(), page.click('button[value="submit"]')]);
    await page.close();
    const result = await calling;
    const wanted = resultText(EXAMPLE, [{ id: "q0", selected: ["SQLite"] }, { id: "q1", selected: ["Lint"] }], "answered");
    check(`${label}: the model read what the person sent from the page`, result.content[0].text === wanted, result.content[0].text);
    console.log(`model read (${label}): ${JSON.stringify(result.content[0].text.split("\n").slice(0, 4).join(" | "))}`);
  } finally {
    await mcp.close();
  }
}

// --- the run ------------------------------------------------------------------

let browser;
let bundle;
async function main() {
  let puppeteer;
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "askq-apps-"));
  try {
    puppeteer = createRequire(path.join(MODULES, "x.js"))("puppeteer-core");
    bundle = await bridgeBundle(scratch);
    writeFiles(scratch);
  } catch (err) {
    console.log(`apps_check: cannot run: ${err.message}`);
    return 2;
  }
  browser = await puppeteer.launch({
    executablePath: CHROMIUM, headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
      "--disable-sync", "--no-first-run", `--user-data-dir=${path.join(scratch, "profile")}`],
  });
  try {
    const rounds = [];
    for (const kind of ["stdio", "http"]) {
      for (const width of [320, 1280]) {
        for (const theme of ["light", "dark"]) {
          rounds.push([`the view, ${kind}, ${width} px, ${theme}`, () => viewRound(kind, width, theme)]);
        }
      }
    }
    for (const kind of ["stdio", "http"]) rounds.push([`forms over ${kind}`, () => formsRound(kind)]);
    rounds.push(["forms drawn by the view in the official Inspector", () => inspectorRound()]);
    for (const kind of ["stdio", "http"]) {
      for (const [name, spec] of Object.entries(FORM_CASES)) {
        rounds.push([`forms drawn by the view over ${kind}: ${name}`, () => appFormRound(kind, name, spec)]);
      }
    }
    for (const kind of ["stdio", "http"]) rounds.push([`the page opened by the server over ${kind}`, () => openedPageRound(kind)]);
    const urls = { elicitation: { form: {}, url: {} } };
    for (const kind of ["stdio", "http"]) {
      const sdk = `URL mode, @modelcontextprotocol/sdk over ${kind}, 2025-11-25`;
      const client2 = `URL mode, @modelcontextprotocol/client over ${kind}, 2026-07-28`;
      const web = `serve --web, a client that opens URLs and draws no forms, over ${kind}`;
      rounds.push([sdk, () => urlRound(sdk, () => connectSdk1(kind, urls), true)]);
      rounds.push([client2, () => urlRound(client2, () => connectClient2(kind, urls), false)]);
      rounds.push([web, () => urlRound(web, () => connectSdk1(kind, { elicitation: { url: {} } }, ["--web"]), true, EXAMPLE)]);
    }
    if (process.env.MCP_PYTHON) {
      for (const kind of ["stdio", "http"]) {
        for (const mode of ["legacy", "auto"]) {
          const label = `URL mode, the mcp SDK (Python) over ${kind}, ${mode}`;
          rounds.push([label, () => pythonUrlRound(label, mode, kind)]);
        }
      }
    } else {
      console.log("skipped: URL mode with the mcp SDK (Python): MCP_PYTHON names no Python that has it");
    }
    const only = option("--only", "");
    for (const [label, round] of rounds) {
      if (!label.includes(only)) continue;
      try {
        await round();
      } catch (err) {
        check(label, false, err.stack || String(err));
      }
    }
  } finally {
    await browser.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
  const renders = measured.renders.slice().sort((a, b) => a - b);
  if (renders.length) console.log(`the view's document: ${[...measured.sizes].join(", ")} bytes; first render in the test host` +
    ` (from handing the frame its document to the questions drawn): median ${renders[renders.length >> 1]} ms,` +
    ` slowest ${renders[renders.length - 1]} ms, over ${renders.length} renders`);
  console.log(`apps: ${passed} passed, ${failures} failed`);
  return failures ? 1 : 0;
}

process.exit(await main());
