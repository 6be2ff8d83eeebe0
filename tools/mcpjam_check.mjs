// mcpjam_check.mjs - drive MCPJam Inspector (@mcpjam/inspector 1.x) in headless Chromium against the
// askq MCP server over stdio, answer its elicitation form as a person would, and check the tool result.
//
// Usage:
//   INSPECTOR_NODE_MODULES=DIR node tools/mcpjam_check.mjs
// Environment (all optional but the first; defaults in brackets):
//   INSPECTOR_NODE_MODULES  node_modules dir holding @mcpjam/inspector and puppeteer-core
//   ASKQ           path to askq.py                                   [the askq.py beside this folder]
//   ASKQ_ARGS      JSON file with the tool arguments                 [the bundled example_args.json]
//   PYTHON         python used to run askq                           [python3]
//   CHROMIUM       Chromium binary                                   [/usr/bin/chromium]
//   PUPPETEER_NODE_MODULES  node_modules dir holding puppeteer-core  [INSPECTOR_NODE_MODULES]
//   NODE_BIN       node binary for the inspector server              [the node running this script]
//   PORT           inspector port                                    [a free port]
//   SHOTS          screenshot folder                                 [a new folder under the system's temp]
//   TOOL           tool to call                                      [the one whose name starts with "ask"]
//   PICK_SINGLE    option to choose in the single choice             [SQLite]
//   PICK_MULTI     comma-separated options for the multi choice      [Unit tests,Lint]
//   NAME           text typed into the free-text question            [orders-api]
//   MULTI_OTHER    text typed into the multi choice's own-answer field [and a changelog check]
//   TIMEOUT_S      overall timeout in seconds                        [180]
// Exit 0 only if the single choice's labels are offered as selectable choices in the form, the multi
// choice's labels are shown in its field, and the submitted answers come back in the tool result
// text; otherwise exit 1 with a sentence saying what was missing (exit 2 for setup errors).
//
// The inspector is started the way its bin/start.js starts it (node dist/server/index.js with
// NODE_ENV=production, PORT and MCP_CONFIG_DATA), minus start.js's attempt to open a browser.
// It listens on every interface, which it does not let one change: run it on a throw-away machine.

import { createRequire } from "module";
import { spawn } from "child_process";
import fs from "fs";
import net from "net";
import os from "os";
import path from "path";
import { fileURLToPath } from "url";

const env = process.env;
const ROOT = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const ASKQ = env.ASKQ || path.join(ROOT, "askq.py");
const ARGS_FILE = env.ASKQ_ARGS || path.join(ROOT, "example_args.json");
const PYTHON = env.PYTHON || "python3";
const CHROMIUM = env.CHROMIUM || "/usr/bin/chromium";
const INSPECTOR_NM = env.INSPECTOR_NODE_MODULES || path.join(ROOT, "node_modules");
const NODE_BIN = env.NODE_BIN || process.execPath;
const SHOTS = env.SHOTS || fs.mkdtempSync(path.join(os.tmpdir(), "askq-mcpjam-"));
const PICK_SINGLE = env.PICK_SINGLE || "SQLite";
const PICK_MULTI = (env.PICK_MULTI || "Unit tests,Lint").split(",").map((s) => s.trim()).filter(Boolean);
const NAME = env.NAME || "orders-api";
const MULTI_OTHER = env.MULTI_OTHER ?? "and a changelog check";
const TIMEOUT_S = Number(env.TIMEOUT_S || 180);

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const log = (...a) => console.log("[check]", ...a);
let inspector = null;
let browser = null;
let finished = false;

async function finish(code, sentence) {
  if (finished) return;
  finished = true;
  if (sentence) (code === 0 ? console.log : console.error)((code === 0 ? "PASS: " : "FAIL: ") + sentence);
  try { if (browser) await browser.close(); } catch {}
  if (inspector && inspector.exitCode === null) {
    try { process.kill(-inspector.pid, "SIGTERM"); } catch {}
    await sleep(500);
    try { process.kill(-inspector.pid, "SIGKILL"); } catch {}
  }
  process.exit(code);
}
setTimeout(() => finish(1, `the whole check took longer than ${TIMEOUT_S}s and was stopped.`), TIMEOUT_S * 1000).unref();

function loadPuppeteer() {
  const dirs = [env.PUPPETEER_NODE_MODULES || INSPECTOR_NM];
  for (const d of dirs) {
    if (fs.existsSync(path.join(d, "puppeteer-core"))) return createRequire(path.join(d, "x.js"))("puppeteer-core");
  }
  throw new Error(`puppeteer-core not found in ${dirs.join(" or ")} (set PUPPETEER_NODE_MODULES)`);
}

function freePort() {
  return new Promise((res, rej) => {
    const s = net.createServer();
    s.listen(0, "127.0.0.1", () => { const p = s.address().port; s.close(() => res(p)); });
    s.on("error", rej);
  });
}

async function waitFor(fn, ms, what) {
  const end = Date.now() + ms;
  let last;
  while (Date.now() < end) {
    try { last = await fn(); if (last) return last; } catch {}
    await sleep(300);
  }
  throw new Error(`timed out after ${ms / 1000}s waiting for ${what}`);
}

// Text of a page element found by its exact (trimmed) text, clicked.
async function clickByText(page, text, scope = "") {
  const els = await page.$$(`xpath/.${scope}//*[self::button or self::a or self::span or self::div or self::code or self::p][normalize-space()=${JSON.stringify(text)}]`);
  for (const el of els) {
    const box = await el.boundingBox();
    if (box) { await el.click(); return true; }
  }
  return false;
}

async function main() {
  for (const [what, p] of [["askq.py", ASKQ], ["the arguments file", ARGS_FILE], ["Chromium", CHROMIUM]]) {
    if (!fs.existsSync(p)) { console.error(`FAIL: ${what} not found at ${p}.`); process.exit(2); }
  }
  const pkgDir = path.join(INSPECTOR_NM, "@mcpjam", "inspector");
  const serverJs = path.join(pkgDir, "dist", "server", "index.js");
  if (!fs.existsSync(serverJs)) { console.error(`FAIL: @mcpjam/inspector not installed under ${INSPECTOR_NM} (no ${serverJs}).`); process.exit(2); }
  const inspectorVersion = JSON.parse(fs.readFileSync(path.join(pkgDir, "package.json"), "utf8")).version;
  let puppeteer;
  try { puppeteer = loadPuppeteer(); } catch (e) { console.error("FAIL: " + e.message); process.exit(2); }
  const args = JSON.parse(fs.readFileSync(ARGS_FILE, "utf8"));
  const questions = args.questions || [];
  const single = questions.find((q) => q.options && !q.multiSelect);
  const multi = questions.find((q) => q.options && q.multiSelect);
  const text = questions.find((q) => !q.options);
  if (!single) { console.error("FAIL: the arguments file has no single-choice question."); process.exit(2); }
  fs.mkdirSync(SHOTS, { recursive: true });

  // 1. Start the inspector with askq configured (stdio).
  const port = Number(env.PORT) || (await freePort());
  const config = { mcpServers: { askq: { command: PYTHON, args: [ASKQ, "serve"] } } };
  const logPath = path.join(SHOTS, "inspector.log");
  const logFd = fs.openSync(logPath, "w");
  inspector = spawn(NODE_BIN, [serverJs], {
    cwd: pkgDir,
    detached: true,
    stdio: ["ignore", logFd, logFd],
    env: { ...env, NODE_ENV: "production", PORT: String(port), BASE_URL: `http://127.0.0.1:${port}`, MCP_CONFIG_DATA: JSON.stringify(config) },
  });
  const base = `http://127.0.0.1:${port}`;
  log(`@mcpjam/inspector ${inspectorVersion}: ${NODE_BIN} ${serverJs} on ${base} (log: ${logPath})`);
  await waitFor(async () => (await fetch(base + "/")).ok, 60000, "the inspector to answer HTTP");

  // 2. Open the UI.
  browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox"], defaultViewport: { width: 1400, height: 1000 } });
  const page = await browser.newPage();
  await page.goto(base + "/", { waitUntil: "networkidle2", timeout: 60000 });
  await sleep(1500);
  if (await clickByText(page, "Or continue as guest")) log("clicked 'Or continue as guest'");
  await sleep(1500);

  // Make sure askq is connected (the card says "Connected"); otherwise toggle its switch.
  const connected = async () => (await page.evaluate(() => document.body.innerText)).match(/\bConnected\b/);
  try { await waitFor(connected, 15000, "askq to connect"); }
  catch {
    log("askq not shown as Connected; toggling its switch");
    const sw = await page.$('button[role=switch]');
    if (sw) { if ((await page.evaluate((e) => e.getAttribute("aria-checked"), sw)) === "true") { await sw.click(); await sleep(1500); } await sw.click(); }
    try { await waitFor(connected, 20000, "askq to connect"); }
    catch { await page.screenshot({ path: path.join(SHOTS, "check_0_not_connected.png") }); return finish(1, "askq never showed as Connected in the MCP Servers page."); }
  }
  log("askq connected");

  // 3. Tools tab, pick the tool.
  if (!(await clickByText(page, "Tools"))) return finish(1, "no Tools tab found in the inspector UI.");
  await sleep(2000);
  const toolName = env.TOOL || (await waitFor(() => page.evaluate(() => {
    const names = [...document.querySelectorAll("code,span,div,p")].map((e) => e.childElementCount === 0 ? e.textContent.trim() : "").filter((t) => /^ask(_[a-z_]+)?$/.test(t));
    return names[0];
  }), 20000, "a tool whose name starts with 'ask' in the tools list"));
  log(`tool: ${toolName}`);
  if (!(await clickByText(page, toolName))) return finish(1, `tool ${toolName} not found in the tools list.`);
  await sleep(1500);

  // Fill the parameters: one JSON textarea per top-level argument.
  const params = await page.$$('textarea');
  const keys = Object.keys(args);
  if (keys.length === 1 && params.length >= 1) {
    const ta = await page.$('textarea[placeholder*="JSON"]') || params[0];
    await page.evaluate((el, v) => {
      Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, "value").set.call(el, v);
      el.dispatchEvent(new Event("input", { bubbles: true }));
    }, ta, JSON.stringify(args[keys[0]], null, 2));
  } else {
    return finish(1, `expected one JSON parameter field for '${keys.join(", ")}', found ${params.length} textareas.`);
  }
  await sleep(500);
  await page.screenshot({ path: path.join(SHOTS, "check_1_tool_args.png") });
  if (!(await clickByText(page, "Execute"))) return finish(1, "no Execute button.");
  log("executed; waiting for the elicitation dialog");

  // 4. The elicitation dialog.
  const dialog = await waitFor(async () => {
    const d = await page.$('[role=dialog]');
    return d && (await page.evaluate((e) => e.innerText.includes("Elicitation"), d)) ? d : null;
  }, 30000, "the elicitation dialog").catch(() => null);
  if (!dialog) { await page.screenshot({ path: path.join(SHOTS, "check_2_no_dialog.png") }); return finish(1, "no elicitation dialog appeared after calling the tool."); }
  await sleep(800);
  await page.screenshot({ path: path.join(SHOTS, "check_2_form.png") });
  await dialog.screenshot({ path: path.join(SHOTS, "check_2_form_dialog.png") }).catch(() => {});

  // Read the fields: for each control, the smallest block holding only it gives label, description, type badge.
  const fields = await page.evaluate(() => {
    const dlg = document.querySelector('[role=dialog]');
    const sel = 'input:not([type=hidden]),textarea,select,[role=combobox],[role=checkbox],[role=radio],[role=switch]';
    const ctrls = [...dlg.querySelectorAll(sel)].filter((c) => !c.closest('[aria-hidden=true]'));
    const blocks = [];
    for (const c of ctrls) {
      let b = c;
      const isGroup = (x) => ['checkbox', 'radio'].includes(x.getAttribute('role')) || ['checkbox', 'radio'].includes(x.type);
      while (b.parentElement && b.parentElement !== dlg) {
        const inside = [...b.parentElement.querySelectorAll(sel)];
        if (isGroup(c) ? inside.some((x) => !isGroup(x)) : inside.length > 1) break;
        b = b.parentElement;
      }
      let idx = blocks.findIndex((x) => x.el === b);
      if (idx < 0) { blocks.push({ el: b, ctrls: [] }); idx = blocks.length - 1; }
      blocks[idx].ctrls.push(c);
    }
    return blocks.map((x, i) => {
      x.el.setAttribute('data-check-field', String(i));
      const lines = x.el.innerText.split('\n').map((s) => s.trim()).filter(Boolean);
      return {
        index: i,
        label: lines[0] || '',
        text: x.el.innerText.replace(/\s+/g, ' ').trim(),
        controls: x.ctrls.map((c) => ({
          tag: c.tagName.toLowerCase(), role: c.getAttribute('role'), type: c.type || null,
          placeholder: c.getAttribute('placeholder'), value: c.value ?? null, shown: (c.innerText || '').trim() || null,
          label: c.getAttribute('aria-label') || (c.id && dlg.querySelector(`label[for="${c.id}"]`)?.innerText) || null,
        })),
      };
    });
  });
  const dialogText = await page.evaluate((d) => d.innerText, dialog);
  const norm = (s) => s.replace(/\s+/g, " ").trim();
  const fieldFor = (q) => fields.find((f) => q && norm(f.text).includes(norm(q.question)));
  log("dialog text:\n" + dialogText.split("\n").map((l) => "    " + l).join("\n"));

  // Open each combobox to list its options.
  for (const f of fields) {
    for (const c of f.controls) {
      if (c.role === "combobox") {
        const el = await page.$(`[data-check-field="${f.index}"] [role=combobox]`);
        await el.click(); await sleep(600);
        c.options = await page.evaluate(() => [...document.querySelectorAll('[role=option]')].map((o) => o.innerText.trim()));
        await page.screenshot({ path: path.join(SHOTS, `check_3_field${f.index}_options.png`) });
        await page.keyboard.press("Escape"); await sleep(400);
      } else if (c.tag === "select") {
        c.options = await page.$eval(`[data-check-field="${f.index}"] select`, (s) => [...s.options].map((o) => o.textContent.trim()));
      }
    }
  }
  const describe = (c) => {
    if (c.role === "combobox") return `dropdown (combobox) showing "${c.shown}", options: ${JSON.stringify(c.options)}`;
    if (c.tag === "select") return `<select> options: ${JSON.stringify(c.options)}`;
    if (c.tag === "textarea") return `textarea (placeholder "${c.placeholder}", value ${JSON.stringify(c.value)})`;
    if (c.role === "checkbox" || c.type === "checkbox") return `checkbox "${c.label || c.shown || ""}"`;
    return `${c.tag}[type=${c.type}] (placeholder "${c.placeholder}")`;
  };
  log("form fields:");
  for (const f of fields) log(`  label "${f.label}" | ${f.text.slice(0, 140)}\n        controls: ${f.controls.map(describe).join("; ")}`);
  const hasWord = (w) => dialogText.includes(w) || fields.some((f) => f.controls.some((c) => (c.options || []).includes(w)));
  for (const w of ["You decide", "Let's discuss", "(Recommended)", "Personalize your response"]) log(`  "${w}" shown: ${hasWord(w) ? "yes" : "no"}`);
  for (const q of [single, multi, text]) {
    if (!q) continue;
    const f = fieldFor(q);
    log(`  question "${q.header || q.question}" -> ${f ? `field labelled "${f.label}", ${f.controls.map(describe).join("; ")}` : "NO FIELD FOUND"}`);
  }
  for (const q of [single, multi]) for (const o of (q && q.options) || []) {
    if (o.description) log(`  option description "${o.description}" shown: ${dialogText.includes(o.description) || fields.some((f) => f.controls.some((c) => (c.options || []).some((t) => t.includes(o.description)))) ? "yes" : "no"}`);
  }

  // Check: the single choice's labels are selectable choices.
  const sf = fieldFor(single);
  if (!sf) return finish(1, `the form has no field for the single choice "${single.question}".`);
  const sc = sf.controls.find((c) => c.options) || null;
  const stripRec = (s) => s.replace(/\s*\(Recommended\)\s*$/, "");
  const missingLabels = [];
  for (const o of single.options) {
    const want = stripRec(o.label);
    const offered = sc ? sc.options.some((t) => stripRec(t) === want || t.startsWith(want)) :
      sf.controls.some((c) => (c.role === "radio" || c.type === "radio") && (c.label || "").includes(want));
    if (!offered) missingLabels.push(o.label);
  }
  if (missingLabels.length) return finish(1, `the single choice "${single.header}" does not offer ${missingLabels.map((l) => `"${l}"`).join(", ")} as selectable choices.`);
  const recommendedShown = single.options.some((o) => /\(Recommended\)/.test(o.label)) ? (sc && sc.options.some((t) => t.includes("(Recommended)"))) || dialogText.includes("(Recommended)") : null;
  log(`single-choice labels offered: yes${recommendedShown === false ? " (without the \"(Recommended)\" badge)" : ""}`);

  // Check: the multi choice's labels reach the screen, as choices or in the field's own words, so
  // that a person knows what to pick (MCPJam draws that question as a JSON field).
  if (multi) {
    const mfield = fieldFor(multi);
    const labelOf = (o) => stripRec(typeof o === "string" ? o : o.label);
    const seen = (l) => mfield && (mfield.text.includes(l) || mfield.controls.some((c) =>
      (c.options || []).some((t) => t.startsWith(l)) || (c.label || "").includes(l)));
    const unseen = multi.options.map(labelOf).filter((l) => !seen(l));
    if (unseen.length) return finish(1, `the multi choice "${multi.header}" shows ${unseen.map((l) => `"${l}"`).join(", ")} nowhere in its field.`);
    log(`multi-choice labels shown: yes (${multi.options.map(labelOf).join(", ")})`);
  }

  // 5. Fill it in like a person.
  if (sc && sc.role === "combobox") {
    await (await page.$(`[data-check-field="${sf.index}"] [role=combobox]`)).click(); await sleep(500);
    const opts = await page.$$('[role=option]');
    let picked = false;
    for (const o of opts) if (stripRec(await page.evaluate((e) => e.innerText.trim(), o)).startsWith(PICK_SINGLE)) { await o.click(); picked = true; break; }
    if (!picked) return finish(1, `could not pick "${PICK_SINGLE}" in the single choice.`);
  } else if (sc && sc.tag === "select") {
    const v = await page.$eval(`[data-check-field="${sf.index}"] select`, (s, want) => [...s.options].find((o) => o.textContent.trim().startsWith(want))?.value, PICK_SINGLE);
    await page.select(`[data-check-field="${sf.index}"] select`, v);
  } else {
    const radios = await page.$$(`[data-check-field="${sf.index}"] [role=radio], [data-check-field="${sf.index}"] input[type=radio]`);
    let picked = false;
    for (const r of radios) if ((await page.evaluate((e) => (e.getAttribute('aria-label') || e.closest('label')?.innerText || e.parentElement.innerText || ''), r)).includes(PICK_SINGLE)) { await r.click(); picked = true; break; }
    if (!picked) return finish(1, `could not pick "${PICK_SINGLE}" in the single choice.`);
  }
  log(`picked "${PICK_SINGLE}"`);
  await sleep(300);

  if (multi) {
    const mf = fieldFor(multi);
    if (!mf) return finish(1, `the form has no field for the multi choice "${multi.question}".`);
    const boxes = await page.$$(`[data-check-field="${mf.index}"] [role=checkbox], [data-check-field="${mf.index}"] input[type=checkbox]`);
    const ta = await page.$(`[data-check-field="${mf.index}"] textarea`);
    if (boxes.length) {
      for (const b of boxes) {
        const lab = await page.evaluate((e) => (e.getAttribute('aria-label') || e.closest('label')?.innerText || e.parentElement.innerText || '').trim(), b);
        if (PICK_MULTI.some((p) => lab.startsWith(p))) await b.click();
      }
      log(`ticked ${JSON.stringify(PICK_MULTI)}`);
    } else if (ta) {
      await ta.click();
      await page.keyboard.down("Control"); await page.keyboard.press("a"); await page.keyboard.up("Control");
      await page.keyboard.press("Backspace");
      await ta.type(JSON.stringify(PICK_MULTI));
      log(`multi choice is a JSON text field; typed ${JSON.stringify(PICK_MULTI)}`);
    } else if (mf.controls.some((c) => c.role === "combobox")) {
      for (const p of PICK_MULTI) {
        await (await page.$(`[data-check-field="${mf.index}"] [role=combobox]`)).click(); await sleep(400);
        for (const o of await page.$$('[role=option]')) if ((await page.evaluate((e) => e.innerText.trim(), o)).startsWith(p)) { await o.click(); break; }
        await sleep(300);
      }
      log(`picked ${JSON.stringify(PICK_MULTI)} in the multi dropdown`);
    } else return finish(1, `no usable control for the multi choice "${multi.header}".`);
    // Text typed beside the picks, in the field for one's own answer, without choosing that row.
    const of = MULTI_OTHER && fields.find((f) => f.label === `${mf.label}_other`);
    if (MULTI_OTHER && !of) return finish(1, `the form has no field "${mf.label}_other" for typing beside the picks.`);
    if (of) {
      await (await page.$(`[data-check-field="${of.index}"] input`)).type(MULTI_OTHER);
      log(`typed "${MULTI_OTHER}" beside the picks`);
    }
  }

  if (text) {
    const tf = fieldFor(text);
    const inp = tf && (await page.$(`[data-check-field="${tf.index}"] input[type=text], [data-check-field="${tf.index}"] textarea, [data-check-field="${tf.index}"] input:not([type])`));
    if (!inp) return finish(1, `no text field for the free-text question "${text.question}".`);
    await inp.type(NAME);
    log(`typed "${NAME}"`);
  }
  await sleep(400);
  await page.screenshot({ path: path.join(SHOTS, "check_4_filled.png") });
  await dialog.screenshot({ path: path.join(SHOTS, "check_4_filled_dialog.png") }).catch(() => {});
  if (!(await clickByText(page, "Accept", "//*[@role='dialog']")) && !(await clickByText(page, "Submit", "//*[@role='dialog']")))
    return finish(1, "no Accept/Submit button in the elicitation dialog.");
  log("clicked Accept");

  // 6. The tool result: expand the result's content[].text string and read it.
  const still = async () => { const d = await page.$('[role=dialog]'); return d ? page.evaluate((e) => e.innerText.replace(/\s+/g, ' ').slice(0, 400), d) : null; };
  let rawClicked = 0;
  await sleep(1000);
  const resultText = await waitFor(async () => {
    // The response panel opens on "Structured Output" when the tool returns structuredContent; the text is under "Raw Output".
    const raw = await page.$$("xpath/.//button[normalize-space()='Raw Output']");
    const hasContent = await page.evaluate(() => [...document.querySelectorAll(".json-view--property")].some((e) => e.textContent === "content"));
    if (raw.length && !hasContent && Date.now() - rawClicked > 1500) { await raw[0].click(); rawClicked = Date.now(); await sleep(700); }
    const pairs = await page.$$(".json-view--pair");
    for (const p of pairs) {
      const prop = await p.$eval(".json-view--property", (e) => e.textContent).catch(() => null);
      if (prop !== "text") continue;
      const s = await p.$(".json-view--string");
      if (!s) continue;
      let t = await page.evaluate((e) => e.textContent, s);
      if (t.endsWith('..."')) { await s.click(); await sleep(500); t = await page.evaluate((e) => e.textContent, await p.$(".json-view--string")); }
      return t;
    }
    return null;
  }, 30000, "the tool result").catch(() => null);
  await sleep(500);
  await page.screenshot({ path: path.join(SHOTS, "check_5_result.png") });
  if (!resultText) {
    const d = await still();
    return finish(1, d ? `after Accept the dialog stayed open and no tool result appeared (dialog: ${d})` : "no tool result text appeared after Accept.");
  }
  log("tool result text (as shown, expanded):\n    " + resultText);
  const bodyText = await page.evaluate(() => document.body.innerText);
  const m = bodyText.match(/status:\s*"([a-z_]+)"/);
  if (m) log(`structured status: ${m[1]}`);

  const missing = [];
  if (!resultText.includes(PICK_SINGLE)) missing.push(`the single choice "${PICK_SINGLE}"`);
  if (multi) for (const p of PICK_MULTI) if (!resultText.includes(p)) missing.push(`the multi choice "${p}"`);
  if (text && !resultText.includes(NAME)) missing.push(`the typed name "${NAME}"`);
  if (multi && MULTI_OTHER && !resultText.includes(MULTI_OTHER)) missing.push(`the text typed beside the picks, "${MULTI_OTHER}"`);
  if (missing.length) return finish(1, `the tool result text does not contain ${missing.join(", ")}.`);
  // The name the inspector gave itself is what askq draws the form by (its table of clients).
  const named = /askq serve: client (.+?) speaks (\S+)/.exec(fs.readFileSync(logPath, "utf8"));
  log(`the inspector named itself ${named ? `"${named[1]}" and spoke ${named[2]}` : "(askq's log does not say)"}`);
  return finish(0, `@mcpjam/inspector ${inspectorVersion} offered ${single.options.map((o) => `"${stripRec(o.label)}"`).join(", ")} as choices, and the result text carries ${[PICK_SINGLE, ...(multi ? PICK_MULTI : []), ...(text ? [NAME] : []), ...(multi && MULTI_OTHER ? [MULTI_OTHER] : [])].map((s) => `"${s}"`).join(", ")}. Screenshots in ${SHOTS}.`);
}

main().catch(async (e) => { console.error("FAIL: the check stopped with an error: " + (e && e.message)); await finish(1); });
