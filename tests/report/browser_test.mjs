// Opens a lockstep report.html in real headless Chromium (Debian's /usr/bin/chromium, driven by
// playwright-core over the DevTools protocol; no browser is downloaded) and checks what a person
// would: the page loads with no console errors and no failed or network requests, every chart
// renders to a non-empty SVG, every section has content. Saves a full-page screenshot.
// Usage: node browser_test.mjs REPORT.html SCREENSHOT.png
import { createRequire } from "node:module";
import { mkdtempSync, rmSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve, dirname } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(join(here, "../../report/web/package.json"));
const { chromium } = require("playwright-core");

const [reportPath, screenshotPath] = process.argv.slice(2);
if (!reportPath || !screenshotPath) {
  console.error("usage: node browser_test.mjs REPORT.html SCREENSHOT.png");
  process.exit(2);
}
const executablePath = process.env.CHROMIUM || "/usr/bin/chromium";
if (!existsSync(executablePath)) {
  console.error(`browser_test: ${executablePath} not found (scripts/install-deps.sh --test installs chromium)`);
  process.exit(1);
}

const failures = [];
const fail = (message) => failures.push(message);
const profile = mkdtempSync(join(tmpdir(), "lockstep-chromium-"));
let context;
try {
  context = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    viewport: { width: 1400, height: 900 },
    timeout: 240000,
  });
  const page = context.pages()[0] || (await context.newPage());
  // Playwright's 30 s defaults fail on a loaded 2-core machine (ctest -j2 beside compilers);
  // the ctest TIMEOUT stays the real bound.
  page.setDefaultTimeout(240000);
  page.setDefaultNavigationTimeout(240000);
  page.on("console", (msg) => {
    if (msg.type() === "error") fail(`console error: ${msg.text()}`);
  });
  page.on("pageerror", (err) => fail(`uncaught exception: ${err.message}`));
  page.on("request", (req) => {
    // A self-contained report fetches nothing but itself (and inline data: URLs).
    const url = req.url();
    if (!url.startsWith("file:") && !url.startsWith("data:")) fail(`network request: ${url}`);
  });
  page.on("requestfailed", (req) => fail(`failed request: ${req.url()}`));

  await page.goto(pathToFileURL(resolve(reportPath)).href, { waitUntil: "load" });
  const charts = await page.evaluate(async () => {
    if (!window.lockstepReport) return { error: "window.lockstepReport missing: the page script did not run" };
    await window.lockstepReport.done;
    return { count: await window.lockstepReport.done };
  });
  if (charts.error) fail(charts.error);

  // Every chart container must hold an SVG with drawn marks; the topology diagram too.
  const report = await page.evaluate(() => {
    const out = { charts: [], sections: [] };
    document.querySelectorAll("[data-chart]").forEach((el) => {
      const svg = el.querySelector("svg");
      out.charts.push({ id: el.id || el.previousElementSibling?.textContent || "?",
        state: el.getAttribute("data-chart"),
        marks: svg ? svg.querySelectorAll("path, rect, line, circle, text").length : 0,
        width: svg ? svg.getBoundingClientRect().width : 0 });
    });
    const topo = document.querySelector("#topology-diagram svg");
    out.topology = topo ? topo.querySelectorAll("rect").length : 0;
    document.querySelectorAll("main > section").forEach((s) =>
      out.sections.push({ id: s.id, text: s.innerText.trim().length }));
    out.summaryRows = document.querySelectorAll("#summary-table tr").length;
    out.expected = ["bom-chart", "busbw-chart", "breakdown-chart", "jitter-chart"]
      .filter((id) => document.getElementById(id).hasAttribute("data-chart"));
    out.empty = [...document.querySelectorAll(".empty")].map((e) => e.parentElement.id || e.parentElement.parentElement.id);
    return out;
  });
  for (const c of report.charts) {
    if (c.state !== "rendered") fail(`chart ${c.id} did not render (state ${c.state})`);
    if (c.marks < 5 || c.width < 50) fail(`chart ${c.id} is empty (${c.marks} marks, ${c.width}px wide)`);
  }
  if (report.topology < 2) fail("topology diagram has no tiers");
  if (report.summaryRows < 2) fail("summary table has no rows");
  for (const s of report.sections) if (s.text < 20) fail(`section ${s.id} is empty`);
  const wanted = (process.env.EXPECT_CHARTS || "").split(",").filter(Boolean);
  for (const id of wanted) {
    if (!report.charts.some((c) => c.id === id)) fail(`expected chart ${id} is missing (sections without data: ${report.empty.join(", ")})`);
  }
  const variants = Number(process.env.EXPECT_VARIANTS || 0);
  if (variants && report.summaryRows !== variants + 1) {
    fail(`summary table has ${report.summaryRows - 1} variant rows, expected ${variants}`);
  }
  // Text a scenario gave (names, titles, variant names holding HTML or script) shows as text:
  // every EXPECT_LITERAL entry ("||"-separated) is in the page's visible text as written, and
  // none of their handlers ran (they would set window.lockstepInjected).
  const literals = (process.env.EXPECT_LITERAL || "").split("||").filter(Boolean);
  if (literals.length) {
    const seen = await page.evaluate(() => ({
      text: document.body.innerText,
      injected: window.lockstepInjected,
      elements: document.querySelectorAll("main img, main script, main b, header img, header svg[onload]").length,
    }));
    for (const text of literals) {
      if (!seen.text.includes(text)) fail(`the page does not show ${JSON.stringify(text)} as text`);
    }
    if (seen.injected !== undefined) fail(`a script from the scenario ran: ${seen.injected}`);
    if (seen.elements) fail(`${seen.elements} elements from the scenario's text were created`);
  }
  // Issue 23: a part another line pays for (an HGX board's NVSwitch chips come with its GPUs)
  // reads "included in ...", never $0, in every variant's bill of materials.
  const bomRows = await page.evaluate(() => [...document.querySelectorAll("#bom-tables tr")]
    .map((tr) => [...tr.children].map((td) => td.textContent)));
  for (const row of bomRows) if (row[4] === "$0") fail(`bill of materials: ${row[0]} is priced $0`);
  // Issue 23: charts that cannot hide a line, a heat map over the whole step, a why-section.
  const seen = await page.evaluate(() => {
    const out = { lines: [], heatmaps: [], why: document.getElementById("why-text")?.innerText || "" };
    document.querySelectorAll("[data-chart]").forEach((el) => {
      const paths = [...el.querySelectorAll(".mark-line path")].map((p) => ({
        d: p.getAttribute("d"), stroke: p.getAttribute("stroke"),
        dash: p.getAttribute("stroke-dasharray") || "" }));
      if (!paths.length) return;
      const labels = new Set([...el.querySelectorAll(".role-legend-label text")].map((t) => t.textContent));
      out.lines.push({ id: el.id, paths, labels: [...labels] });
    });
    document.querySelectorAll("#heatmap-charts [data-chart]").forEach((el, i) => out.heatmaps.push({ i,
      span: Number(el.getAttribute("data-span-us")),
      ticks: [...el.querySelectorAll(".role-legend-label text")].map((t) => t.textContent) }));
    return out;
  });
  const data = JSON.parse(await page.evaluate(() => document.getElementById("lockstep-data").textContent));
  for (const c of seen.lines) {
    // Every legend entry has a style of its own, and lines drawn over one another differ in
    // their dashes (so the one below shows through the gaps of the one above).
    const styles = new Set(c.paths.map((p) => `${p.stroke}|${p.dash}`));
    if (styles.size < c.labels.length) fail(`chart ${c.id}: ${c.labels.length} legend entries but ${styles.size} distinct line styles`);
    const byPath = new Map();
    c.paths.forEach((p) => byPath.set(p.d, [...(byPath.get(p.d) || []), p.dash]));
    for (const dashes of byPath.values()) {
      if (new Set(dashes).size < dashes.length) fail(`chart ${c.id}: ${dashes.length} coincident lines drawn with the same dash: one hides the other`);
    }
  }
  const mapped = data.variants.filter((v) => v.link_heatmap && v.link_heatmap.links.length);
  mapped.forEach((v, i) => {
    const h = v.link_heatmap, m = seen.heatmaps[i];
    const trials = v.training && v.training.jitter ? v.training.jitter.iteration_time_us : [];
    const shortest = Math.min(v.training.iteration_time_us, ...trials);
    const covered = h.bucket_us * Math.max(...h.links.map((l) => l.utilisation.length));
    if (covered < 0.99 * shortest) fail(`heat map of ${v.name} covers ${covered} us of a step of at least ${shortest} us`);
    if (!m || !(m.span >= covered * 0.999)) fail(`heat map of ${v.name}: its time axis spans ${m && m.span} us, not the ${covered} us recorded`);
    if (m && m.ticks.length > 1 && new Set(m.ticks).size === 1) fail(`heat map of ${v.name}: every colour-legend tick reads ${m.ticks[0]}`);
  });
  // The why-section names each trained variant's largest part of the step.
  const words = { compute: "Compute", exposed_tp: "Exposed TP communication", exposed_ep: "Exposed EP communication",
    exposed_cp: "Exposed CP communication", exposed_pp: "Exposed PP communication", exposed_dp: "Exposed DP communication",
    pipeline_bubble: "Pipeline bubble", imbalance: "Waiting on other ranks" };
  for (const v of data.variants.filter((x) => x.training)) {
    const top = v.training.breakdown.reduce((a, b) => (b.time_us > a.time_us ? b : a));
    if (!seen.why.includes(`${words[top.name]} dominates`)) fail(`why-section does not name ${v.name}'s dominant part (${top.name})`);
  }
  // Issue 21: each trained variant's configuration line shows results.json's job keys.
  const configLines = await page.evaluate(() => [...document.querySelectorAll("#breakdown-config li")].map((li) => li.textContent));
  for (const v of data.variants.filter((x) => x.training)) {
    const t = v.training;
    const line = configLines.find((l) => l.startsWith(`${v.name}: `));
    const want = [t.parallelism, `${t.precision} weight GEMMs`, `${t.attention_kernel} attention`, `moments ${t.optimizer_moments}`];
    if (t.recompute !== "none") want.push(`${t.recompute} recomputation`);
    if (t.parallel.pipeline_timing === "closed_form_on_1f1b") want.push("closed form over the simulated 1F1B step");
    for (const w of want) if (!line || !line.includes(w)) fail(`configuration line of ${v.name} does not show ${JSON.stringify(w)}: ${line}`);
    // The other job keys on the line below, as `lockstep train` prints them.
    const o = t.options;
    const options = configLines.find((l) => l.startsWith(`${v.name} options: `));
    for (const w of [`efficiency ${o.efficiency}`, `tp_comm_overlap ${o.tp_comm_overlap ? "on" : "off"}`,
      `overlap_param_gather ${o.overlap_param_gather ? "on" : "off"}`,
      `grad_reduce_in_fp32 ${o.grad_reduce_in_fp32 ? "on" : "off"}`, `clip_grad ${o.clip_grad}`]) {
      if (!options || !options.includes(w)) fail(`options line of ${v.name} does not show ${JSON.stringify(w)}: ${options}`);
    }
  }
  // Issue 23: the links-under-load table shows, per variant, the counters of results.json's
  // largest flow / packet row, leaves out all-zero columns, and is absent (not empty) without
  // such rows; a sweep whose fabric paused links says so in the why-section with its total.
  const pushback = await page.evaluate(() => [...document.querySelectorAll("#pushback-tables table")].map((t) => ({
    variant: t.getAttribute("data-variant"),
    rows: [...t.querySelectorAll("tr")].map((tr) => [...tr.children].map((c) => c.textContent)) })));
  const largest = (v) => (v.collectives || []).map((s) => {
    const rows = s.rows.filter((r) => r.links && r.links.length);
    return rows.length ? { op: s.op, row: rows.reduce((a, b) => (b.bytes > a.bytes ? b : a)) } : null;
  }).filter(Boolean);
  const measured = data.variants.filter((v) => largest(v).length);
  if (pushback.length !== measured.length) fail(`links-under-load: ${pushback.length} tables for ${measured.length} variants with flow / packet rows`);
  for (const t of pushback) if (t.rows.length < 2) fail(`links-under-load table of ${t.variant} has no rows`);
  const counters = { "PFC pauses": "pfc_pauses", "ECN marks": "ecn_marks", drops: "drops", trims: "trims",
    retransmissions: "retransmissions", CNPs: "cnps", "credit stalls": "credit_stalls" };
  for (const v of measured) {
    const t = pushback.find((x) => x.variant === v.name);
    if (!t) continue;
    const links = largest(v).flatMap((m) => m.row.links);
    const header = t.rows[0];
    if (t.rows.length - 1 !== links.length) fail(`links-under-load ${v.name}: ${t.rows.length - 1} rows, results.json has ${links.length} links`);
    for (const [h, key] of Object.entries(counters)) {
      const col = header.indexOf(h);
      const any = links.some((l) => l[key]);
      if (any !== (col >= 0)) fail(`links-under-load ${v.name}: column ${h} ${col >= 0 ? "shown" : "missing"} with ${any ? "non-zero" : "all-zero"} counts`);
      if (col < 0) continue;
      links.forEach((l, i) => {
        const cell = t.rows[i + 1][col], want = (l[key] || 0).toLocaleString("en-US");
        if (cell !== want) fail(`links-under-load ${v.name}: ${l.name} ${h} reads ${cell}, results.json ${want}`);
      });
    }
    const names = t.rows.slice(1).map((r) => r[0]);
    if (names.join("|") !== links.map((l) => l.name).join("|")) fail(`links-under-load ${v.name}: links ${names} are not results.json's`);
    for (const m of largest(v)) {
      const n = m.row.network;
      if (n && n.pfc_pauses > 0 && !seen.why.includes(`PFC paused links ${n.pfc_pauses.toLocaleString("en-US")} times`)) {
        fail(`why-section does not say ${v.name}'s ${m.op} paused links ${n.pfc_pauses} times`);
      }
    }
  }
  const expectPauses = Number(process.env.EXPECT_PAUSED_LINKS || 0);
  if (expectPauses) {
    const paused = pushback.flatMap((t) => {
      const col = t.rows[0].indexOf("PFC pauses");
      return col < 0 ? [] : t.rows.slice(1).filter((r) => r[col] !== "0");
    });
    if (paused.length < expectPauses) fail(`links-under-load: ${paused.length} paused links shown, expected at least ${expectPauses}`);
  }
  // Issue 26: each inference variant's tables show results.json's numbers: every cell reads back
  // to its field within half the cell's last digit (ms, µs, %, $, kWh, s as shown), the
  // all-reduce table has a row per NCCL algorithm; EXPECT_INFERENCE variants have such tables.
  const inferenceTables = await page.evaluate(() => [...document.querySelectorAll("#inference-tables table")].map((t) => ({
    variant: t.getAttribute("data-variant"), name: t.getAttribute("data-table"),
    rows: [...t.querySelectorAll("tr")].slice(1).map((tr) => [...tr.children].map((c) => c.textContent)) })));
  const unitOf = { "ms": 1e-3, "µs": 1e-6, "s": 1, "%": 1e-2, "kWh": 1, "": 1 };
  function readBack(where, cell, want) {
    const m = /^\$?([\d,]+(?:\.(\d+))?)\s*(ms|µs|s|%|kWh)?$/.exec(cell);
    if (!m) return fail(`${where} reads ${JSON.stringify(cell)}, not a number with a unit`);
    const unit = unitOf[m[3] || ""];
    const shown = Number(m[1].replace(/,/g, "")) * unit;
    const tol = 0.5 * Math.pow(10, -(m[2] || "").length) * unit * (1 + 1e-9);
    if (!(Math.abs(shown - want) <= tol)) fail(`${where} reads ${cell}, results.json ${want}`);
  }
  const served = data.variants.filter((v) => v.inference);
  const wantServed = Number(process.env.EXPECT_INFERENCE || 0);
  if (served.length !== wantServed) fail(`${served.length} inference variants in results.json, expected ${wantServed}`);
  for (const v of served) {
    const r = v.inference, of = (name) => inferenceTables.find((t) => t.variant === v.name && t.name === name);
    const latency = of("latency"), throughput = of("throughput"), floors = of("floors"), ar = of("all-reduce");
    if (!latency || !throughput || !floors || !ar) { fail(`inference ${v.name}: a table is missing`); continue; }
    [["TTFT", r.ttft_s], ["TPOT", r.tpot_s], ["end to end", r.e2e_s]].forEach(([name, q], i) => {
      if (latency.rows[i][0] !== name) fail(`inference ${v.name}: latency row ${i} is ${latency.rows[i][0]}, not ${name}`);
      ["p50", "p90", "p99", "mean"].forEach((p, k) => readBack(`inference ${v.name} ${name} ${p}`, latency.rows[i][k + 1], q[p]));
    });
    const figures = { "output tokens/s (cluster)": r.output_tokens_per_s, "output tokens/s per GPU": r.output_tokens_per_s_per_gpu,
      "tokens/s with prompts": r.total_tokens_per_s, "requests/s": r.requests_per_s, "GPU busy (in steps)": r.gpu_busy,
      kernels: r.compute_share, communication: r.network_share, "MFU (of the BF16 peak)": r.mfu,
      "HBM bandwidth used": r.hbm_utilisation, "cost per million output tokens": r.cost_per_million_tokens_usd,
      "energy per million output tokens": r.energy_kwh_per_million_tokens, makespan: r.makespan_s };
    for (const [name, want] of Object.entries(figures)) {
      const row = throughput.rows.find((x) => x[0] === name);
      if (!row) fail(`inference ${v.name}: no ${name} row`);
      else readBack(`inference ${v.name} ${name}`, row[1], want);
    }
    [r.decode_batch1, r.prefill_one].forEach((c, i) => ["seconds", "compute_s", "tp_s", "ep_s", "pp_s"].forEach((k, j) =>
      readBack(`inference ${v.name} floor ${floors.rows[i][0]} ${k}`, floors.rows[i][j + 1], c[k])));
    const algos = r.decode_all_reduce.algorithms;
    if (ar.rows.length !== algos.length) fail(`inference ${v.name}: ${ar.rows.length} all-reduce rows, results.json has ${algos.length}`);
    algos.forEach((a, i) => {
      if (!ar.rows[i] || !ar.rows[i][0].startsWith(a.name)) return fail(`inference ${v.name}: all-reduce row ${i} is not ${a.name}`);
      readBack(`inference ${v.name} all-reduce ${a.name}`, ar.rows[i][1], a.seconds);
    });
  }
  // The summary's inference columns (sweep.csv's) read back to results.json's summary rows.
  const summaryCells = await page.evaluate(() => {
    const rows = [...document.querySelectorAll("#summary-table tr")].map((tr) => [...tr.children].map((c) => c.textContent));
    return { header: rows[0] || [], rows: rows.slice(1) };
  });
  const col = (name) => summaryCells.header.indexOf(name);
  if (served.length && col("TPOT p50 / p99") < 0) fail("the summary table has no inference columns");
  if (!served.length && col("TPOT p50 / p99") >= 0) fail("the summary table has inference columns without an inference job");
  data.summary.forEach((s, i) => {
    if (s.ttft_p50_ms === null || col("TTFT p50 / p99") < 0) return;
    const row = summaryCells.rows[i];
    [["TTFT p50 / p99", s.ttft_p50_ms, s.ttft_p99_ms], ["TPOT p50 / p99", s.tpot_p50_ms, s.tpot_p99_ms]].forEach(([name, p50, p99]) => {
      const [a, b] = row[col(name)].replace(/ ms$/, "").split(" / ");
      readBack(`summary ${s.variant} ${name} p50`, `${a} ms`, p50 * 1e-3);
      readBack(`summary ${s.variant} ${name} p99`, `${b} ms`, p99 * 1e-3);
    });
    readBack(`summary ${s.variant} tokens/s/GPU`, row[col("output tokens/s/GPU")], s.output_tokens_per_s_per_gpu);
    readBack(`summary ${s.variant} $/M tokens`, row[col("$/M tokens")], s.cost_per_million_tokens_usd);
  });
  const unserved = await page.evaluate(() => document.querySelector("#inference-tables .empty")?.textContent || "");
  if (!served.length && !unserved.includes("No inference job")) fail("the inference section does not say the scenario has no inference job");
  await page.screenshot({ path: screenshotPath, fullPage: true });
  console.log(`browser_test: ${report.charts.length} charts rendered, topology with ${report.topology} tiers; screenshot ${screenshotPath}`);
} catch (err) {
  fail(`browser_test: ${err.stack || err}`);
} finally {
  if (context) await context.close();
  rmSync(profile, { recursive: true, force: true });
}
if (failures.length) {
  for (const f of failures) console.error("FAIL: " + f);
  process.exit(1);
}
console.log("browser_test: report loads cleanly");
