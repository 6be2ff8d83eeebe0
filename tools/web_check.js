// The page in a real browser: axe-core's WCAG 2 A and AA rules in every state
// of the page, at a phone's width and a desktop's, light and dark, with
// hostile model text; and what a person does there, checked as they see it.
//
//     node tools/web_check.js --modules DIR [--askq askq.py] [--shots DIR] [--only files]
//
// DIR holds node_modules with puppeteer-core and axe-core; the browser is
// Debian's chromium (CHROMIUM overrides /usr/bin/chromium), run headless.
// Each state comes from a real `python askq.py ask FILE --web` on 127.0.0.1:
//   fresh, refused (sent empty but for a number out of range and a
//   secret, which the page asks for again), dismiss confirm, sent (the
//   secret hidden), you decide and discuss ticked, asked for more (ask me
//   more first, showing each state), timed out (the
//   page's own countdown runs out and shows what was kept, headed "Time
//   ran out", never "No answer in time", above what was sent), 409 (a second
//   browser context, a second device, sends after the first one), the
//   connection lost while the person types, the dismiss confirm without
//   script, one tap (a one-question ask's option opened from the
//   notification's link: its one button, sent, and another option's button
//   pressed after the end, the 409 page), and files: a picture picked
//   (previewed from its bytes), one pasted and one dropped, a web page named
//   .png refused with every entry kept, the pictures sent, with and without
//   script; files that fit one by one but not together, refused before
//   anything is sent.
// The number field keeps a decimal comma and says its range before anything is
// sent; the sent page shows typed text as typed (quotes, no JSON escapes)
// and a number as the model reads it, with its unit; a timeout never keeps a secret (no draft carries one);
// without script, text typed
// beside a pick goes with it.  Beside axe, in every state: nothing scrolls sideways.  Once per width and
// scheme: Enter in a one-line field or on a check box or radio button (with
// and without script) sends nothing, a problem's link moves
// the focus to its question's first control, a timeout keeps the picks the
// page held, and the 409 page shows the second device's entries, never the
// first's.
//
// Exit status: 0 when every check passed, 1 when any failed, 2 when the
// check could not run.  --shots DIR saves a screenshot of every state.

"use strict";
const fs = require("fs");
const os = require("os");
const path = require("path");
const { spawn } = require("child_process");

const args = process.argv.slice(2);
function option(name, fallback) {
  const at = args.indexOf(name);
  return at >= 0 && at + 1 < args.length ? args[at + 1] : fallback;
}
const ROOT = path.dirname(__dirname);
const MODULES = option("--modules", process.env.ASKQ_WEB_MODULES || "");
const ASKQ = option("--askq", path.join(ROOT, "askq.py"));
const SHOTS = option("--shots", "");
const PYTHON = process.env.PYTHON || "python3";
const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
const WIDTHS = (option("--widths", "320,1280")).split(",").map(Number);
const ONLY = option("--only", "");  // "files": the attachments' states alone
const SCHEMES = ["light", "dark"];
const TIMEOUT_S = 4;

const LONG = "Unbroken" + "x".repeat(180);
const CALL = {questions: [
  {question: `Which database? ${LONG} /srv/a/very/long/path/with/no/spaces/in/it/at/all/config.yaml`, header: "Database",
   purpose: "Tabs\there, and HTML: <b>bold</b> <script>alert(1)</script>",
   options: [
     {label: "PostgreSQL (Recommended)", description: "Needs\ta server",
      preview: "# Schema\n\n```sql\nCREATE TABLE t (\n\tid int -- " + "y".repeat(120) + "\n);\n```\n- **fast**\n- `pg_dump`"},
     {label: "قاعدة بيانات محلية", description: "ملف واحد على القرص", preview: "## معاينة\n\nنص *مهم* هنا"},
     {label: "evil \u202eedoc\u202c", description: "an override, shown as an escape"}]},
  {question: "ما هي الفحوصات التي تريدها؟", header: "فحوصات", multiSelect: true,
   options: ["اختبارات الوحدة", "Lint", "https://example.com/a/very/long/url/that/does/not/break/anywhere/" + "z".repeat(60)]},
  {question: "Name?", header: "Name", placeholder: "e.g. billing-api"},
  {question: "Notes?", required: false},
  {question: "How much memory?", header: "Memory", type: "number", minimum: 1, maximum: 64, step: 1, unit: "GB", default: "8"},
  {question: "The deploy token?", header: "Token", secret: true, required: false},
]};
const SECRET = "hunter2-s3cr3t";
// One pick, for the links a notification carries: hostile text in its label and question.
const TAP_CALL = {questions: [
  {question: `Deploy ${LONG} to /srv/a/very/long/path/with/no/spaces/in/it/at/all/now?`, header: "Deploy",
   options: [{label: `Yes, ${LONG} <b>now</b>`, description: "Tabs\there, and \u202eedoc\u202c"},
             {label: "نعم، لاحقا", description: "بعد الاجتماع"}]},
]};

let failures = 0;
function fail(message) {
  failures += 1;
  console.log(`web_check: FAILED: ${message}`);
}

function startAskq(file, extra) {
  // One page: its process and its URL, read from the line the CLI prints on stderr.
  const child = spawn(PYTHON, [ASKQ, "ask", file, "--web", "--port", "0", ...extra], {stdio: ["ignore", "pipe", "pipe"]});
  let stderr = "", stdout = "";
  child.stdout.on("data", (chunk) => { stdout += chunk; });
  const url = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("askq printed no URL within 20 s")), 20000);
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
      const found = /answer the questions at (\S+)/.exec(stderr);
      if (found) { clearTimeout(timer); resolve(found[1]); }
    });
    child.on("exit", () => reject(new Error(`askq ended before it printed a URL: ${stderr}`)));
  });
  const ended = new Promise((resolve) => child.on("exit", (code) => resolve({code, stdout, stderr})));
  return {child, url, ended};
}

async function axeCheck(page, state, label, axeSource, results) {
  await page.addScriptTag({content: axeSource});
  const found = await page.evaluate(async () => {
    const report = await window.axe.run(document, {runOnly: {type: "tag", values: ["wcag2a", "wcag2aa"]}});
    return report.violations.map((v) => ({id: v.id, nodes: v.nodes.map((n) => n.target.join(" ")).slice(0, 3)}));
  });
  const sideways = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  if (!results.has(state)) { results.set(state, {checked: 0, violations: 0, ids: new Set()}); }
  const seen = results.get(state);
  seen.checked += 1;
  seen.violations += found.length;
  found.forEach((v) => seen.ids.add(v.id));
  if (found.length) { fail(`${label} ${state}: axe violations ${JSON.stringify(found)}`); }
  if (sideways > 0) { fail(`${label} ${state}: the page scrolls sideways by ${sideways} px`); }
  if (SHOTS) { await page.screenshot({path: path.join(SHOTS, `${label}-${state}.png`), fullPage: true}); }
}

async function newPage(context, width, scheme) {
  const page = await context.newPage();
  await page.setBypassCSP(true);  // so that axe can be injected; the page's own nonce'd style and script run as ever
  await page.setViewport({width, height: 800, deviceScaleFactor: 1, isMobile: width < 500, hasTouch: width < 500});
  await page.emulateMediaFeatures([{name: "prefers-color-scheme", value: scheme}]);
  return page;
}

async function clickAndWait(page, selector) {
  await Promise.all([page.waitForNavigation({waitUntil: "load", timeout: 15000}), page.click(selector)]);
}

async function fillRequired(page) {
  await page.click("#answer-0-1");  // the right-to-left option
  await page.click("#answer-1");
  await page.type("#answer-2", "billing-api");
}

async function formStates(browser, file, width, scheme, label, axeSource, results) {
  // fresh, refused, dismiss confirm and sent, on one page; with the person's checks on the way.
  const run = startAskq(file, []);
  const url = await run.url;
  const page = await newPage(browser.defaultBrowserContext(), width, scheme);
  await page.goto(url, {waitUntil: "load"});
  await axeCheck(page, "fresh", label, axeSource, results);
  let drafts = 0;
  page.on("request", (request) => { if ((request.postData() || "").endsWith("action=draft")) { drafts += 1; } });
  await page.type("input.other", "typed, then Enter");
  await page.keyboard.press("Enter");
  await new Promise((resolve) => setTimeout(resolve, 500));
  if (!(await page.$("form.questions")) || (await page.$("#problems"))) { fail(`${label}: Enter in a one-line field sent the form`); }
  await new Promise((resolve) => setTimeout(resolve, 1000));
  if (drafts < 1 || drafts > 2) { fail(`${label}: typing for a moment sent ${drafts} drafts of the form, not one or two`); }
  const before = drafts;
  await page.type("#answer-3", "more, a moment later");
  await new Promise((resolve) => setTimeout(resolve, 3500));
  if (drafts - before < 1 || drafts - before > 2) { fail(`${label}: typing again sent ${drafts - before} drafts, not one or two`); }
  await page.evaluate(() => { document.getElementById("answer-3").value = ""; });
  await page.focus("#answer-1");
  await page.keyboard.press("Enter");  // on a check box, Enter clicks the first submit button that is not disabled
  await new Promise((resolve) => setTimeout(resolve, 500));
  if (!(await page.$("form.questions")) || (await page.$("#problems"))) { fail(`${label}: Enter on a check box sent the form`); }
  await page.evaluate(() => {
    const field = document.querySelector("input.other");
    field.value = "";
    document.getElementById(field.dataset.row).checked = false;
  });
  await page.evaluate(() => { document.getElementById("answer-4").value = ""; });
  await page.type("#answer-4", "3,5");  // a decimal comma stays as typed: the field is text, read by the server
  const comma = await page.$eval("#answer-4", (field) => field.value);
  if (comma !== "3,5") { fail(`${label}: the number field turned "3,5" into ${JSON.stringify(comma)}`); }
  const takes = await page.$eval("#takes-4", (hint) => hint.textContent);
  if (takes !== "Type one number from 1 to 64 GB in steps of 1.") { fail(`${label}: the number's range beside it reads ${takes}`); }
  await page.evaluate(() => { document.getElementById("answer-4").value = ""; });
  await page.type("#answer-4", "99");
  await page.type("#answer-5", SECRET);
  await clickAndWait(page, "button.send");
  await axeCheck(page, "refused", label, axeSource, results);
  const refused = await page.content();
  if (refused.includes(SECRET)) { fail(`${label}: the refused page writes the secret back`); }
  if (!refused.includes('id="retype-5"') || !refused.includes("That is out of range: it takes one number from 1 to 64 GB")) {
    fail(`${label}: the refused page does not ask for the secret again or name the number's range`);
  }
  const kind = await page.$eval("#answer-4", (field) => [field.type, field.inputMode, field.value]);
  if (JSON.stringify(kind) !== JSON.stringify(["text", "decimal", "99"])) { fail(`${label}: the number entry is ${kind}`); }
  await page.click('#problems a[href="#answer-2"]');
  const focused = await page.evaluate(() => document.activeElement && document.activeElement.id);
  if (focused !== "answer-2") { fail(`${label}: a problem's link focused ${JSON.stringify(focused)}, not its question's first control`); }
  await fillRequired(page);
  await page.type("#answer-2", ' "v2"');  // quotes, shown back as typed, never as JSON escapes
  await page.evaluate(() => { document.getElementById("answer-4").value = "16"; });
  await clickAndWait(page, 'button[value="dismiss"]');
  await axeCheck(page, "dismiss confirm", label, axeSource, results);
  await clickAndWait(page, '#confirm button[value="back"]');
  await page.type("#answer-5", SECRET);
  await clickAndWait(page, "button.send");
  await axeCheck(page, "sent", label, axeSource, results);
  const sent = await page.content();
  if (sent.includes(SECRET) || !sent.includes("(hidden)")) { fail(`${label}: the sent page does not hide the secret`); }
  const said = await page.evaluate(() => document.body.innerText);
  if (!said.includes('Name: "billing-api "v2""') || said.includes('\\"') || !said.includes('Memory: "16 GB"')) {
    fail(`${label}: the sent page does not show the text as typed and the number as the model reads it: ${said}`);
  }
  const ended = await run.ended;
  if (ended.code !== 0 || !ended.stdout.includes('"status": "answered"')) { fail(`${label}: the sent page's run ended ${ended.code}: ${ended.stdout}`); }
  if (!ended.stdout.includes(SECRET) || !ended.stdout.includes('"16"')) { fail(`${label}: the outcome lacks the secret or the number: ${ended.stdout}`); }
  await page.close();
}

async function stateStates(browser, file, width, scheme, label, axeSource, results) {
  // You decide and discuss: one at a time, the answer's controls resting; then ask me more first.
  const run = startAskq(file, []);
  const page = await newPage(browser.defaultBrowserContext(), width, scheme);
  let secretSent = false;
  page.on("request", (request) => { if ((request.postData() || "").includes("hunter")) { secretSent = true; } });
  await page.goto(await run.url, {waitUntil: "load"});
  await page.type("#answer-5", "hunter");  // a secret typed never goes with the drafts
  await page.click("#answer-0");
  await page.click("#state-0-you_decide");
  await page.click("#state-0-discuss");
  await page.click("#state-2-you_decide");
  const seen = await page.evaluate(() => [document.getElementById("state-0-you_decide").checked,
    document.getElementById("state-0-discuss").checked, document.getElementById("answer-0").disabled,
    document.getElementById("answer-2").disabled, document.getElementById("answer-3").disabled]);
  if (JSON.stringify(seen) !== JSON.stringify([false, true, true, true, false])) {
    fail(`${label}: the states are not one at a time, or do not rest the answer's controls: ${seen}`);
  }
  await new Promise((resolve) => setTimeout(resolve, 1500));
  if (secretSent) { fail(`${label}: a draft carried the secret being typed, before the person sent it`); }
  await axeCheck(page, "you decide and discuss", label, axeSource, results);
  await page.evaluate(() => { document.getElementById("answer-5").value = ""; });
  await clickAndWait(page, 'button[value="follow-up"]');
  await axeCheck(page, "asked for more", label, axeSource, results);
  const text = await page.evaluate(() => document.body.innerText);
  if (!text.includes("Asked for more questions") || !text.includes("(Let's discuss)") || !text.includes("(You decide)")) {
    fail(`${label}: the page after ask me more first does not show each state: ${text}`);
  }
  const ended = await run.ended;
  if (!ended.stdout.includes('"status": "follow_up"') || !ended.stdout.includes('"unanswered": "discuss"')) {
    fail(`${label}: ask me more first ended ${ended.stdout}`);
  }
  await page.close();
}

async function timedOutState(browser, file, width, scheme, label, axeSource, results) {
  // The person picks, then pauses: the countdown runs out, and the page says what was kept.
  const run = startAskq(file, ["--timeout", String(TIMEOUT_S)]);
  const page = await newPage(browser.defaultBrowserContext(), width, scheme);
  await page.goto(await run.url, {waitUntil: "load"});
  await page.click("#answer-1-1");
  await page.type("#answer-5", SECRET);  // never sent by a draft: not kept on a timeout
  await page.waitForFunction(() => document.querySelector("h1") && document.querySelector("h1").textContent !== "Questions for you",
                             {timeout: (TIMEOUT_S + 15) * 1000});
  await page.waitForSelector("main", {timeout: 5000});
  await axeCheck(page, "timed out", label, axeSource, results);
  const text = await page.evaluate(() => document.body.innerText);
  if (!text.includes("Time ran out") || text.includes("No answer in time") || !text.includes("Lint") || text.includes(SECRET)) {
    fail(`${label}: the timed-out page does not show the pick kept under its heading, or shows the secret: ${text}`);
  }
  const ended = await run.ended;
  if (!ended.stdout.includes('"status": "timed_out"') || !ended.stdout.includes('"Lint"') || ended.stdout.includes(SECRET)) {
    fail(`${label}: the timeout kept ${ended.stdout}`);
  }
  await page.close();
}

async function lateState(browser, file, width, scheme, label, axeSource, results) {
  // Two devices on one link: the first sends, then the second.
  const run = startAskq(file, []);
  const url = await run.url;
  const second = await browser.createBrowserContext();
  const one = await newPage(browser.defaultBrowserContext(), width, scheme);
  const two = await newPage(second, width, scheme);
  const third = await browser.createBrowserContext();
  const typing = await newPage(third, width, scheme);
  await one.goto(url, {waitUntil: "load"});
  await two.goto(url, {waitUntil: "load"});
  await typing.goto(url, {waitUntil: "load"});
  await fillRequired(one);
  await two.click("#answer-0");
  await two.click("#answer-1-2");
  await two.type("#answer-2", "typed on the second device");
  await clickAndWait(one, "button.send");
  await clickAndWait(two, "button.send");
  // A third device only types after the answers are in, within the grace period: its page learns so.
  await typing.type("#answer-3", "a third device, typing");
  await typing.waitForFunction(() => document.querySelector("h1").textContent === "Your answers were not sent", {timeout: 5000})
    .catch(() => fail(`${label}: a device that types after the answers are in is not told`));
  await axeCheck(two, "409", label, axeSource, results);
  const text = await two.evaluate(() => document.body.innerText);
  if (!text.includes("Your answers were not sent") || !text.includes("typed on the second device") || text.includes("billing-api")) {
    fail(`${label}: the second device's page does not tell the truth: ${text}`);
  }
  await run.ended;
  await one.close();
  await second.close();
  await third.close();
}

async function lostState(browser, file, width, scheme, label, axeSource, results) {
  // The machine that asked goes away while the person types: the page says so, in sight, and keeps every entry.
  const run = startAskq(file, []);
  const page = await newPage(browser.defaultBrowserContext(), width, scheme);
  await page.goto(await run.url, {waitUntil: "load"});
  run.child.kill("SIGKILL");
  await run.ended;
  await page.type("#answer-2", "typed after the connection was lost");
  await page.waitForSelector("#offline:not([hidden])", {timeout: 10000});
  await axeCheck(page, "connection lost", label, axeSource, results);
  const inSight = await page.evaluate(() => {
    const box = document.getElementById("offline").getBoundingClientRect();
    return box.top >= 0 && box.bottom <= window.innerHeight && document.getElementById("answer-2").value.length > 0;
  });
  if (!inSight) { fail(`${label}: the lost connection is not said where the person is, or the entry went`); }
  await page.close();
}

async function noScriptState(browser, file, width, scheme, label, axeSource, results) {
  // Without script: dismissing still takes its second step, and keeps the picks.
  const run = startAskq(file, []);
  const page = await newPage(browser.defaultBrowserContext(), width, scheme);
  await page.setJavaScriptEnabled(false);
  await page.goto(await run.url, {waitUntil: "load"});
  await page.click("#answer-1-1");
  await page.focus("#answer-0");
  await Promise.all([page.waitForNavigation({waitUntil: "load", timeout: 15000}), page.keyboard.press("Enter")]);
  if ((await page.$("#problems")) || !(await page.$eval("#answer-1-1", (box) => box.checked))) {
    fail(`${label}: without script, Enter on a radio button sent the form or lost an entry`);
  }
  // Text typed beside a pick, its row not ticked (no script ticks it): never dropped.
  await page.click("#answer-0");
  await page.type('input[name="other:q0"]', "or MariaDB if possible");
  await page.type('input[name="other:q1"]', "and ruff");
  await clickAndWait(page, 'button[value="dismiss"]');
  await page.setJavaScriptEnabled(true);  // for axe only: the page's own script is not on it until it loads again
  await axeCheck(page, "dismiss confirm, no script", label, axeSource, results);
  await page.setJavaScriptEnabled(false);
  await clickAndWait(page, 'button[value="confirm-dismiss"]');
  const ended = await run.ended;
  if (!ended.stdout.includes('"status": "declined"') || !ended.stdout.includes('"Lint"') ||
      !ended.stdout.includes('"answer": "and ruff"') || !ended.stdout.includes('"note": "or MariaDB if possible"')) {
    fail(`${label}: a dismissal without script ended ${ended.stdout}`);
  }
  await page.close();
}

async function tapState(browser, scratch, width, scheme, label, axeSource, results) {
  // The notification's links: one option opened shows it with one button; a second device presses another after the end.
  const file = path.join(scratch, "tap.json"), told = path.join(scratch, `taps-${label}.json`);
  const notify = path.join(scratch, "notify.py");
  fs.writeFileSync(file, JSON.stringify(TAP_CALL));
  fs.writeFileSync(notify, "import os, sys\nopen(sys.argv[1], 'w').write(os.environ['ASKQ_ACTIONS'])\n");
  const run = startAskq(file, ["--notify", `${PYTHON} ${notify} ${told}`]);
  await run.url;
  const deadline = Date.now() + 20000;
  while (!fs.existsSync(told) || !fs.readFileSync(told, "utf8")) {
    if (Date.now() > deadline) { throw new Error("the notify command was given no ASKQ_ACTIONS"); }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const taps = JSON.parse(fs.readFileSync(told, "utf8"));
  const one = await newPage(browser.defaultBrowserContext(), width, scheme);
  const second = await browser.createBrowserContext();
  const two = await newPage(second, width, scheme);
  await one.goto(taps[0].url, {waitUntil: "load"});
  await two.goto(taps[1].url, {waitUntil: "load"});
  await axeCheck(one, "one tap", label, axeSource, results);
  const buttons = await one.$$eval("button", (found) => found.map((button) => button.textContent));
  if (buttons.length !== 1 || !buttons[0].includes("<b>now</b>")) { fail(`${label}: a tap's page has the buttons ${JSON.stringify(buttons)}`); }
  await clickAndWait(one, "button.send");
  await axeCheck(one, "one tap sent", label, axeSource, results);
  await clickAndWait(two, "button.send");
  await axeCheck(two, "one tap after the end (409)", label, axeSource, results);
  const text = await two.evaluate(() => document.body.innerText);
  if (!text.includes("Your answers were not sent") || !text.includes("نعم، لاحقا")) {
    fail(`${label}: another option pressed after the end does not say so: ${text}`);
  }
  const ended = await run.ended;
  if (ended.code !== 0 || !ended.stdout.includes("<b>now</b>")) { fail(`${label}: the tap's run ended ${ended.code}: ${ended.stdout}`); }
  await one.close();
  await second.close();
}

function crc32(bytes) {
  let crc = -1;
  for (const byte of bytes) {
    crc ^= byte;
    for (let bit = 0; bit < 8; bit += 1) { crc = (crc >>> 1) ^ (0xEDB88320 & -(crc & 1)); }
  }
  return (crc ^ -1) >>> 0;
}

function makePng(width, height) {
  // A real picture (a gradient with a band), as a phone's camera would send one.
  const zlib = require("zlib");
  const rows = [];
  for (let y = 0; y < height; y += 1) {
    const row = [0];
    for (let x = 0; x < width; x += 1) {
      const band = Math.abs(y - height / 2) < height / 8;
      row.push(band ? 255 : (x * 255) / width, band ? 200 : (y * 255) / height, band ? 0 : 160);
    }
    rows.push(Buffer.from(row));
  }
  function chunk(kind, data) {
    const body = Buffer.concat([Buffer.from(kind, "ascii"), data]);
    const length = Buffer.alloc(4); length.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4); crc.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, crc]);
  }
  const head = Buffer.alloc(13);
  head.writeUInt32BE(width, 0); head.writeUInt32BE(height, 4);
  head[8] = 8; head[9] = 2;
  return Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), chunk("IHDR", head),
    chunk("IDAT", zlib.deflateSync(Buffer.concat(rows))), chunk("IEND", Buffer.alloc(0))]);
}

async function attachmentStates(browser, file, scratch, width, scheme, label, axeSource, results, script) {
  // A picture attached by the file input (with script: its preview drawn from its bytes) and a web page
  // named .png (refused in the page's words, everything entered kept, never drawn), then sent: the
  // outcome carries the picture.  Without script, the plain file input does the same.
  const picture = path.join(scratch, "layout.png"), hostile = path.join(scratch, "page.png");
  fs.writeFileSync(picture, makePng(160, 90));
  fs.writeFileSync(hostile, "<!DOCTYPE html><html><body><script>alert(1)</script><svg onload=alert(2)></svg>");
  const run = startAskq(file, []);
  const page = await newPage(browser.defaultBrowserContext(), width, scheme);
  const mode = script ? "" : ", no script";
  if (!script) { await page.setJavaScriptEnabled(false); }
  await page.goto(await run.url, {waitUntil: "load"});
  await (await page.$("#file-0")).uploadFile(picture);
  await (await page.$("#file-3")).uploadFile(hostile);
  if (script) {
    await page.waitForSelector("fieldset#question-0 ul.picked img.thumb", {timeout: 5000})
      .catch(() => fail(`${label}: a picture picked is not previewed`));
    await new Promise((resolve) => setTimeout(resolve, 300));
    if (await page.$("fieldset#question-3 img")) { fail(`${label}: a web page named .png was drawn as a picture`); }
    // A screenshot pasted while typing in a question, and one dropped on another: each joins that question's picker.
    const bytes = Array.from(makePng(40, 30));
    const joined = await page.evaluate((png) => {
      function bag(name) {
        const data = new DataTransfer();
        data.items.add(new File([new Uint8Array(png)], name, {type: "image/png"}));
        return data;
      }
      document.getElementById("answer-2").focus();
      document.getElementById("answer-2").dispatchEvent(new ClipboardEvent("paste", {clipboardData: bag("pasted.png"), bubbles: true}));
      document.getElementById("question-4").dispatchEvent(new DragEvent("drop", {dataTransfer: bag("dropped.png"), bubbles: true, cancelable: true}));
      return [document.getElementById("file-2").files.length, document.getElementById("file-4").files.length];
    }, bytes);
    await page.waitForSelector("fieldset#question-4 ul.picked img.thumb", {timeout: 5000})
      .catch(() => fail(`${label}: a dropped picture is not previewed`));
    if (JSON.stringify(joined) !== "[1,1]") { fail(`${label}: a paste and a drop did not join their questions' pickers: ${joined}`); }
    await axeCheck(page, "files picked", label, axeSource, results);
  }
  await page.type("#answer-2", "typed before the refusal");
  await clickAndWait(page, "button.send");
  if (!script) { await page.setJavaScriptEnabled(true); }
  await axeCheck(page, `files refused${mode}`, label, axeSource, results);
  if (!script) { await page.setJavaScriptEnabled(false); }
  const refused = await page.evaluate(() => [document.body.innerText,
    Array.from(document.querySelectorAll("img")).map((img) => img.src.slice(0, 22)),
    document.getElementById("answer-2").value, document.querySelectorAll("svg, iframe, object, embed").length]);
  const pictures = JSON.stringify(Array(script ? 3 : 1).fill("data:image/png;base64,"));
  if (!refused[0].includes("That file is not one this page takes") || JSON.stringify(refused[1]) !== pictures ||
      refused[2] !== "typed before the refusal" || refused[3] !== 0) {
    fail(`${label}${mode}: the refused page does not keep the picture and the entries, or draws the web page: ${JSON.stringify(refused.slice(1))}`);
  }
  await fillRequired(page);
  await clickAndWait(page, "button.send");
  if (!script) { await page.setJavaScriptEnabled(true); }
  await axeCheck(page, `files sent${mode}`, label, axeSource, results);
  const said = await page.evaluate(() => document.body.innerText);
  if (!said.includes("attached: layout.png (image/png")) { fail(`${label}${mode}: the sent page does not name the picture: ${said}`); }
  const ended = await run.ended;
  if (!ended.stdout.includes('"media_type": "image/png"') || !ended.stdout.includes('"name": "layout.png"') ||
      (script && (!ended.stdout.includes('"name": "pasted.png"') || !ended.stdout.includes('"name": "dropped.png"')))) {
    fail(`${label}${mode}: the outcome lacks the picture: ${ended.stdout}`);
  }
  await page.close();
}

async function tooMuchState(browser, file, scratch, width, scheme, label) {
  // Files that fit one by one but not together: refused on the page before anything is sent, entries kept.
  const big = path.join(scratch, "nine.png");
  fs.writeFileSync(big, Buffer.concat([makePng(8, 8), Buffer.alloc(9 * 1024 * 1024)]));
  const run = startAskq(file, []);
  const page = await newPage(browser.defaultBrowserContext(), width, scheme);
  let posted = false;
  page.on("request", (request) => { if (request.method() === "POST" && !(request.postData() || "").endsWith("action=draft")) { posted = true; } });
  await page.goto(await run.url, {waitUntil: "load"});
  await page.type("#answer-2", "kept while refused");
  for (const input of ["#file-0", "#file-2", "#file-3"]) { await (await page.$(input)).uploadFile(big); }
  await page.click("button.send");
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const seen = await page.evaluate(() => [document.getElementById("answer-2").value,
    Array.from(document.querySelectorAll("div.files p.error")).filter((p) => !p.hidden).map((p) => p.textContent)]);
  if (posted || seen[0] !== "kept while refused" || seen[1].length !== 1 || !seen[1][0].startsWith("All the files together come to 27.0 MB")) {
    fail(`${label}: files too large together were sent, or not refused in words with the entries kept: ${JSON.stringify(seen)} ${posted}`);
  }
  run.child.kill();
  await run.ended;
  await page.close();
}

async function main() {
  let puppeteer, axeSource;
  try {
    puppeteer = require(path.join(MODULES, "node_modules", "puppeteer-core"));
    axeSource = fs.readFileSync(require.resolve(path.join(MODULES, "node_modules", "axe-core", "axe.min.js")), "utf8");
  } catch (err) {
    console.log(`web_check: cannot run: puppeteer-core and axe-core are not in ${MODULES || "(no --modules)"}/node_modules`);
    return 2;
  }
  if (!fs.existsSync(CHROMIUM)) {
    console.log(`web_check: cannot run: no browser at ${CHROMIUM}`);
    return 2;
  }
  if (SHOTS) { fs.mkdirSync(SHOTS, {recursive: true}); }
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "askq-web-check-"));
  const file = path.join(scratch, "call.json");
  fs.writeFileSync(file, JSON.stringify(CALL));
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM, headless: true, userDataDir: path.join(scratch, "profile"),
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
           "--disable-sync", "--no-first-run"],
  });
  const results = new Map();  // in the order the states were first seen
  try {
    for (const width of WIDTHS) {
      for (const scheme of SCHEMES) {
        const label = `${width}px-${scheme}`;
        if (ONLY !== "files") {
          await formStates(browser, file, width, scheme, label, axeSource, results);
          await stateStates(browser, file, width, scheme, label, axeSource, results);
          await timedOutState(browser, file, width, scheme, label, axeSource, results);
          await lateState(browser, file, width, scheme, label, axeSource, results);
          await lostState(browser, file, width, scheme, label, axeSource, results);
          await noScriptState(browser, file, width, scheme, label, axeSource, results);
          await tapState(browser, scratch, width, scheme, label, axeSource, results);
        }
        await attachmentStates(browser, file, scratch, width, scheme, label, axeSource, results, true);
        await attachmentStates(browser, file, scratch, width, scheme, label, axeSource, results, false);
        if (scheme === "light") { await tooMuchState(browser, file, scratch, width, scheme, label); }
      }
    }
  } finally {
    await browser.close();
    fs.rmSync(scratch, {recursive: true, force: true});
  }
  const version = JSON.parse(fs.readFileSync(path.join(MODULES, "node_modules", "axe-core", "package.json"), "utf8")).version;
  for (const [state, seen] of results) {
    const ids = seen.ids.size ? ` (${[...seen.ids].join(", ")})` : "";
    console.log(`web_check: axe-core ${version}, ${state}: ${seen.violations} violations in ${seen.checked} views${ids}`);
  }
  console.log(`web_check: ${failures ? "FAILED" : "passed"}: ${results.size} states at ${WIDTHS.join(" and ")} px, light and dark`);
  return failures ? 1 : 0;
}

main().then((code) => process.exit(code), (err) => {
  console.log(`web_check: FAILED: ${err && err.stack || err}`);
  process.exit(1);
});
