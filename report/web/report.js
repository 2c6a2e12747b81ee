// lockstep report page: reads the results (results.json, embedded in #lockstep-data) and draws
// every section with Vega-Lite. No network access: the library is inlined in the same file.
// window.lockstepReport.done resolves when every chart has rendered (the browser test waits on it).
"use strict";

(function () {
  const data = JSON.parse(document.getElementById("lockstep-data").textContent);
  const variants = data.variants || [];
  const embedOptions = { renderer: "svg", actions: false };
  const pending = [];

  // ---- formatting -------------------------------------------------------------------------
  function el(tag, attrs, text) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
    if (text !== undefined) node.textContent = text;
    return node;
  }
  function fmtNumber(x, digits) {
    if (x === null || x === undefined || !isFinite(x)) return "–";
    return x.toLocaleString("en-US", { maximumFractionDigits: digits === undefined ? 1 : digits });
  }
  function fmtUsd(x) {
    if (x === null || x === undefined) return "–";
    if (Math.abs(x) >= 1e6) return "$" + fmtNumber(x / 1e6, 2) + "M";
    if (Math.abs(x) >= 1e3) return "$" + fmtNumber(x / 1e3, 1) + "k";
    return "$" + fmtNumber(x, 2);
  }
  // A bill-of-materials line another line pays for (an HGX baseboard's NVSwitch chips come with
  // its GPUs) reads "included in ...", not $0; an estimated price says so.
  function included(l) {
    return (l.price_note || "").startsWith("included");
  }
  function priceCell(l) {
    if (included(l)) return l.price_note;
    return fmtUsd(l.unit_price_usd) + (l.price_note ? ` (${l.price_note})` : "");
  }
  // Three significant digits in the unit that keeps the number short: 21.4 s, 87.9 ms, 12.5 µs.
  function fmtTime(us) {
    if (us === null || us === undefined) return "–";
    const three = (x) => fmtNumber(x, x >= 100 ? 0 : x >= 10 ? 1 : 2);
    if (Math.abs(us) >= 1e6) return three(us / 1e6) + " s";
    if (Math.abs(us) >= 1e3) return three(us / 1e3) + " ms";
    return three(us) + " µs";
  }
  // The tail of the trials: the p99 from 100 trials on; below that the nearest-rank p99 is the
  // maximum (ceil(0.99 n) = n for n < 100), so the maximum is shown and named as such.
  const kTrialsForP99 = 100;
  function tail(jitter) {
    if (!jitter) return null;
    return jitter.trials >= kTrialsForP99
      ? { label: "p99", us: jitter.p99_us, words: "p99" }
      : { label: "max", us: jitter.max_us, words: `max of ${jitter.trials} trials` };
  }
  function networkCost(inv) {
    return inv.lines.filter((l) => l.category !== "gpu").reduce((a, l) => a + (l.cost_usd || 0), 0);
  }
  // Series of a chart that coincide: for each series after the first of a group with the same
  // points (within 0.05%), the earlier one it repeats. A note says so under the chart, and the
  // series are drawn with distinct dashes and markers so that both stay visible.
  function identicalSeries(values, seriesField, keyField, valueField) {
    const bySeries = new Map();
    values.forEach((v) => {
      if (!bySeries.has(v[seriesField])) bySeries.set(v[seriesField], new Map());
      bySeries.get(v[seriesField]).set(v[keyField], v[valueField]);
    });
    const names = [...bySeries.keys()];
    const notes = [];
    names.forEach((b, j) => {
      const pb = bySeries.get(b);
      for (let i = 0; i < j; i++) {
        const pa = bySeries.get(names[i]);
        if (pa.size !== pb.size || pa.size === 0) continue;
        const same = [...pa].every(([k, x]) => pb.has(k) &&
          Math.abs(pb.get(k) - x) <= 5e-4 * Math.max(Math.abs(x), Math.abs(pb.get(k)), 1e-12));
        if (same) { notes.push({ series: b, of: names[i] }); break; }
      }
    });
    return notes;
  }
  function showIdentical(listId, notes, what) {
    const ul = document.getElementById(listId);
    notes.forEach((n) => ul.appendChild(el("li", { "data-identical": n.series },
      `${n.series} is identical to ${n.of} (every ${what} within 0.05%): drawn dashed over it.`)));
  }
  function fmtBytes(b) {
    const units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let i = 0;
    while (b >= 1024 && i < units.length - 1) { b /= 1024; i++; }
    return fmtNumber(b, 1) + " " + units[i];
  }
  function pct(x) { return x === null || x === undefined ? "–" : fmtNumber(x * 100, 1) + "%"; }
  function table(header, rows, textColumns) {
    const t = el("table");
    const head = el("tr");
    header.forEach((h) => head.appendChild(el("th", {}, h)));
    t.appendChild(head);
    rows.forEach((r) => {
      const tr = el("tr");
      r.forEach((cell, i) => {
        const td = el("td", (textColumns || []).includes(i) ? { class: "text" } : {}, String(cell));
        tr.appendChild(td);
      });
      t.appendChild(tr);
    });
    return t;
  }
  // The other job keys as `lockstep train` prints them (src/report/training.cpp, options_text).
  function optionsText(o) {
    const onOff = (b) => (b ? "on" : "off");
    let s = `efficiency ${o.efficiency}`;
    if (o.peak_tflops !== null) s += `, peak_tflops ${o.peak_tflops}`;
    s += `, tp_comm_overlap ${onOff(o.tp_comm_overlap)}, overlap_dp ${onOff(o.overlap_dp)}` +
      `, overlap_param_gather ${onOff(o.overlap_param_gather)}` +
      `, grad_reduce_in_fp32 ${onOff(o.grad_reduce_in_fp32)}`;
    s += o.bucket_bytes !== null ? `, bucket ${o.bucket_bytes} B` : ", bucket default";
    s += `, optimizer_step ${onOff(o.optimizer_step)}, clip_grad ${o.clip_grad}`;
    if (o.moe_imbalance !== 1) s += `, moe_imbalance ${o.moe_imbalance}`;
    if (o.lora_rank > 0) s += `, lora_rank ${o.lora_rank} on ${o.lora_targets}`;
    if (o.account_for_embedding_in_pipeline_split) s += ", embedding in pipeline split";
    if (o.account_for_loss_in_pipeline_split) s += ", loss in pipeline split";
    if (o.communication_sms > 0) s += `, communication_sms ${o.communication_sms}`;
    return s;
  }
  function empty(container, message) {
    container.classList.remove("chart");
    container.appendChild(el("p", { class: "empty" }, message));
  }
  function chart(container, spec) {
    container.setAttribute("data-chart", "pending");
    const p = vegaEmbed(container, Object.assign({ $schema: "https://vega.github.io/schema/vega-lite/v6.json" }, spec), embedOptions)
      .then(() => container.setAttribute("data-chart", "rendered"));
    pending.push(p);
    return p;
  }

  function jitterOf(name) {
    const v = variants.find((x) => x.name === name);
    return v && v.training ? v.training.jitter : null;
  }

  // ---- summary ----------------------------------------------------------------------------
  function summary() {
    const rows = data.summary || [];
    const list = document.getElementById("headline");
    const trained = rows.filter((r) => r.iteration_time_us !== null);
    if (trained.length > 0) {
      const best = trained.reduce((a, b) => (b.iteration_time_us < a.iteration_time_us ? b : a));
      let line = `Fastest training step: ${best.variant}, ${fmtTime(best.iteration_time_us)}` +
        (best.mfu !== null ? ` (MFU ${pct(best.mfu)})` : "") + ".";
      const others = trained.filter((r) => r !== best).map((r) =>
        `${r.variant} +${fmtNumber((r.iteration_time_us / best.iteration_time_us - 1) * 100, 1)}%`);
      if (others.length) line += " Slower: " + others.join(", ") + ".";
      list.appendChild(el("li", {}, line));
      const tails = trained.map((r) => ({ r, t: tail(jitterOf(r.variant)) })).filter((x) => x.t);
      if (tails.length) {
        list.appendChild(el("li", {}, "Tail under jitter: " + tails.map(({ r, t }) =>
          `${r.variant} ${fmtTime(t.us)} (${t.words})` +
          (r.lockstep_waste_usd !== null ? `, lockstep waste ${fmtUsd(r.lockstep_waste_usd)}/step` : "")).join("; ") + "."));
      }
    }
    const served = variants.filter((v) => v.inference);
    if (served.length) {
      list.appendChild(el("li", {}, "Inference: " + served.map((v) => {
        const r = v.inference;
        return `${v.name} TTFT p99 ${ms(r.ttft_s.p99)}, TPOT p50 ${ms(r.tpot_s.p50)}, ` +
          `${fixed(r.output_tokens_per_s, 1)} output tokens/s, $${fixed(r.cost_per_million_tokens_usd, 3)} per million tokens`;
      }).join("; ") + "."));
    }
    const bw = rows.filter((r) => r.peak_busbw_GBps !== null);
    if (bw.length) {
      list.appendChild(el("li", {}, `Bus bandwidth at the largest ${bw[0].peak_busbw_op} message: ` +
        bw.map((r) => `${r.variant} ${fmtNumber(r.peak_busbw_GBps, 1)} GB/s`).join(", ") + "."));
    }
    if (rows.length) {
      list.appendChild(el("li", {}, "Cluster cost and power: " + rows.map((r) => {
        const v = variants.find((x) => x.name === r.variant);
        const net = v ? networkCost(v.inventory) : null;
        return `${r.variant} ${fmtUsd(r.cost_usd)}` +
          (net !== null ? ` (network ${fmtUsd(net)}, ${fmtUsd(net / Math.max(1, r.gpus))} per GPU)` : "") +
          `, ${fmtNumber(r.power_w / 1e3, 1)} kW` + (r.feasible ? "" : " (INFEASIBLE)");
      }).join("; ") + "."));
    }
    const header = ["variant", "GPUs", "cost", "network cost", "network/GPU", "power", "busbw (GB/s)",
      "step time", "tail step", "MFU", "tokens/s", "cost/step", "lockstep waste/step"];
    // An inference job's columns (sweep.csv's), when a variant serves one.
    const serving = rows.some((r) => r.ttft_p50_ms !== null && r.ttft_p50_ms !== undefined);
    if (serving) header.push("TTFT p50 / p99", "TPOT p50 / p99", "output tokens/s/GPU", "$/M tokens");
    const msPair = (a, b) => (a === null ? "–" : `${fixed(a, 3)} / ${fixed(b, 3)} ms`);
    document.getElementById("summary-table").appendChild(table(header, rows.map((r) => {
      const v = variants.find((x) => x.name === r.variant);
      const net = v ? networkCost(v.inventory) : null;
      const t = tail(jitterOf(r.variant));
      const cells = [r.variant, fmtNumber(r.gpus, 0), fmtUsd(r.cost_usd), fmtUsd(net),
        net === null ? "–" : fmtUsd(net / Math.max(1, r.gpus)), fmtNumber(r.power_w / 1e3, 1) + " kW",
        fmtNumber(r.peak_busbw_GBps, 1), fmtTime(r.iteration_time_us), t ? `${fmtTime(t.us)} (${t.words})` : "–",
        pct(r.mfu), fmtNumber(r.tokens_per_s, 0), fmtUsd(r.cost_per_step_usd), fmtUsd(r.lockstep_waste_usd)];
      if (serving) {
        cells.push(msPair(r.ttft_p50_ms, r.ttft_p99_ms), msPair(r.tpot_p50_ms, r.tpot_p99_ms),
          fixed(r.output_tokens_per_s_per_gpu, 1), fixed(r.cost_per_million_tokens_usd, 3));
      }
      return cells;
    })));
    document.getElementById("subtitle").textContent =
      `${variants.length} variant${variants.length === 1 ? "" : "s"}` +
      (data.variant_keys.length ? ` of ${data.variant_keys.join(", ")}` : "") + ` · seed ${data.seed}`;
    document.getElementById("version").textContent = data.lockstep_version;
  }

  // ---- why: the sentences lockstep generated from the numbers (report/why.cpp) ------------
  // plus one per sweep whose fabric pushed back at its largest size (pushbackSentence).
  function why() {
    const host = document.getElementById("why-text");
    const explained = variants.map((v) => ({ v, lines: (v.why || []).concat(
      measuredSweeps(v).map(pushbackSentence).filter(Boolean)) })).filter((x) => x.lines.length);
    if (!explained.length) return empty(host, "No training step in this scenario and no fabric push-back: nothing to explain.");
    explained.forEach(({ v, lines }) => {
      host.appendChild(el("h3", {}, v.name));
      lines.forEach((line) => host.appendChild(el("p", { class: "why" }, line)));
    });
  }

  // ---- links under load: the flow / packet engine's counters (docs/telemetry.md) ----------
  // Each sweep of a variant whose rows carry `links` (flow and packet engines), at its largest
  // message: the row nccl-tests users read, and the one whose busiest links the engine kept.
  function measuredSweeps(v) {
    return (v.collectives || []).map((s) => {
      const rows = s.rows.filter((r) => r.links && r.links.length);
      if (!rows.length) return null;
      const row = rows.reduce((a, b) => (b.bytes > a.bytes ? b : a));
      return { sweep: s, row, label: `${fmtBytes(row.bytes)} ${s.op}` };
    }).filter(Boolean);
  }
  const count = (x) => fmtNumber(x || 0, 0);
  // One sentence when the fabric pushed back (PAUSEs, ECN marks, drops, trims, retransmissions,
  // CNPs, credit stalls summed over every link: the row's `network`), naming the link paused
  // longest (or, without pauses, the one with most drops, trims or marks).
  function pushbackSentence(m) {
    const n = m.row.network;
    if (!n) return null;
    const parts = [];
    if (n.pfc_pauses > 0) parts.push(`PFC paused links ${count(n.pfc_pauses)} times for ${fmtTime(n.pfc_paused_us)} in all`);
    if (n.drops > 0) parts.push(`${count(n.drops)} packets were dropped (${fmtBytes(n.dropped_bytes)})`);
    if (n.trims > 0) parts.push(`${count(n.trims)} packets were trimmed`);
    if (n.retransmissions > 0) parts.push(`${count(n.retransmissions)} retransmitted`);
    if (n.ecn_marks > 0) parts.push(`ECN marked ${count(n.ecn_marks)} packets`);
    if (n.cnps > 0) parts.push(`receivers sent ${count(n.cnps)} CNPs`);
    if (n.credit_stalls > 0) parts.push(`senders waited for credits ${count(n.credit_stalls)} times`);
    if (!parts.length) return null;
    const score = (l) => [l.pfc_paused_us || 0, (l.drops || 0) + (l.trims || 0), l.ecn_marks || 0];
    const worst = m.row.links.reduce((a, b) => {
      const sa = score(a), sb = score(b);
      for (let i = 0; i < sa.length; i++) if (sa[i] !== sb[i]) return sb[i] > sa[i] ? b : a;
      return a;
    });
    const ws = score(worst);
    let most = "";
    if (ws[0] > 0) most = `; most on ${worst.name}: paused ${count(worst.pfc_pauses)} times for ${fmtTime(worst.pfc_paused_us)}`;
    else if (ws[1] > 0) most = `; most on ${worst.name}: ${count(worst.drops)} drops, ${count(worst.trims)} trims`;
    else if (ws[2] > 0) most = `; most on ${worst.name}: ${count(worst.ecn_marks)} ECN marks`;
    if (most && worst.peak_at_us !== undefined && worst.peak_at_us !== null) {
      most += `, its peak ${pct(worst.peak_utilisation)} at ${fmtTime(worst.peak_at_us)}`;
    }
    return `The fabric pushed back in the ${m.label} (${m.sweep.engine} engine): ${parts.join(", ")}${most}.`;
  }
  // Counter columns: left out when zero (or absent: the flow engine has no packet counters) in
  // every row of the table.
  const linkColumns = [
    { h: "link", f: (l) => l.name || `link ${l.link}`, always: true, text: true },
    { h: "collective", f: (l, m) => m.label, always: true, text: true },
    { h: "bytes", f: (l) => fmtBytes(l.bytes), always: true },
    { h: "utilisation", f: (l) => pct(l.utilisation), always: true },
    { h: "peak (when)", v: (l) => l.peak_utilisation,
      f: (l) => `${pct(l.peak_utilisation)} at ${fmtTime(l.peak_at_us)}` },
    { h: "time ≥ 90%", v: (l) => l.above_90_us, f: (l) => fmtTime(l.above_90_us) },
    { h: "queue p99", v: (l) => l.queue_p99_bytes, f: (l) => fmtBytes(l.queue_p99_bytes) },
    { h: "PFC pauses", v: (l) => l.pfc_pauses, f: (l) => count(l.pfc_pauses) },
    { h: "paused", v: (l) => l.pfc_paused_us, f: (l) => fmtTime(l.pfc_paused_us) },
    { h: "ECN marks", v: (l) => l.ecn_marks, f: (l) => count(l.ecn_marks) },
    { h: "drops", v: (l) => l.drops, f: (l) => count(l.drops) },
    { h: "trims", v: (l) => l.trims, f: (l) => count(l.trims) },
    { h: "retransmissions", v: (l) => l.retransmissions, f: (l) => count(l.retransmissions) },
    { h: "CNPs", v: (l) => l.cnps, f: (l) => count(l.cnps) },
    { h: "credit stalls", v: (l) => l.credit_stalls, f: (l) => count(l.credit_stalls) },
  ];
  function pushback() {
    const host = document.getElementById("pushback-tables");
    const measured = variants.map((v) => ({ v, sweeps: measuredSweeps(v) })).filter((x) => x.sweeps.length);
    if (!measured.length) {
      return empty(host, "No collective sweep ran on the flow or packet engine: the analytical engine has no per-link counters.");
    }
    measured.forEach(({ v, sweeps }) => {
      const rows = sweeps.flatMap((m) => m.row.links.map((l) => ({ l, m })));
      const cols = linkColumns.filter((c) => c.always || rows.some(({ l }) => c.v(l)));
      host.appendChild(el("h3", {}, v.name));
      const t = table(cols.map((c) => c.h), rows.map(({ l, m }) => cols.map((c) => c.f(l, m))),
        cols.map((c, i) => (c.text ? i : -1)).filter((i) => i >= 0));
      t.setAttribute("data-variant", v.name);
      host.appendChild(t);
    });
  }

  // ---- topology by tiers (an SVG diagram: boxes per tier, widest at the bottom) -----------
  const tierRank = { dci: 0, core: 1, spine: 2, aggregation: 2, agg: 2, leaf: 3, edge: 3, tor: 3, scale_up: 5 };
  function topology() {
    const host = document.getElementById("topology-diagram");
    if (!variants.length) return empty(host, "No cluster in this scenario.");
    const ns = "http://www.w3.org/2000/svg";
    variants.forEach((v) => {
      const inv = v.inventory;
      const rows = inv.tiers.slice().sort((a, b) => (tierRank[a.tier] ?? 4) - (tierRank[b.tier] ?? 4))
        .map((t) => ({ label: `${t.tier}: ${fmtNumber(t.switches, 0)} switches`,
          detail: `${fmtNumber(t.ports_used, 0)} ports used, ${fmtNumber(t.ports_free, 0)} free` +
            (t.oversubscription > 1.0001 ? `, ${fmtNumber(t.oversubscription, 2)}:1` : ""),
          fill: "#d9e8fb" }));
      rows.push({ label: `NICs: ${fmtNumber(inv.nics, 0)}`, detail: `${fmtNumber(inv.injection_per_gpu_GBps, 1)} GB/s per GPU`, fill: "#e3f4e1" });
      rows.push({ label: `GPUs: ${fmtNumber(inv.gpus, 0)} in ${fmtNumber(inv.nodes, 0)} nodes`,
        detail: `${fmtNumber(inv.cables, 0)} cables, ${fmtNumber(inv.transceivers, 0)} transceivers`, fill: "#fdebd3" });
      const width = 300, rowH = 44, gap = 22, height = rows.length * (rowH + gap);
      const svg = document.createElementNS(ns, "svg");
      svg.setAttribute("width", width);
      svg.setAttribute("height", height);
      svg.setAttribute("role", "img");
      rows.forEach((r, i) => {
        const y = i * (rowH + gap) + 4;
        const w = 150 + (width - 160) * (i + 1) / rows.length;  // wider towards the GPUs
        const x = (width - w) / 2;
        if (i > 0) {
          const line = document.createElementNS(ns, "path");
          line.setAttribute("d", `M${width / 2 - 40} ${y - gap} L${width / 2 - 60} ${y} M${width / 2 + 40} ${y - gap} L${width / 2 + 60} ${y} M${width / 2} ${y - gap} L${width / 2} ${y}`);
          line.setAttribute("stroke", "#9fb3c8");
          svg.appendChild(line);
        }
        const rect = document.createElementNS(ns, "rect");
        Object.entries({ x, y, width: w, height: rowH, rx: 6, fill: r.fill, stroke: "#829ab1" })
          .forEach(([k, val]) => rect.setAttribute(k, val));
        svg.appendChild(rect);
        [[r.label, 18, "600"], [r.detail, 34, "400"]].forEach(([text, dy, weight]) => {
          const t = document.createElementNS(ns, "text");
          Object.entries({ x: width / 2, y: y + dy, "text-anchor": "middle", "font-size": 12, "font-weight": weight })
            .forEach(([k, val]) => t.setAttribute(k, val));
          t.textContent = text;
          svg.appendChild(t);
        });
      });
      const col = el("div", { class: "topo-col" });
      col.appendChild(el("h3", {}, v.name));
      col.appendChild(el("div", { class: "lead" }, inv.design));
      col.appendChild(svg);
      col.appendChild(el("div", { class: "lead" }, `bisection ${fmtNumber(inv.bisection_GBps, 0)} GB/s · ` +
        `diameter ${inv.diameter_switch_hops} switch hops · max latency ${fmtTime(inv.max_one_way_latency_us)}`));
      if (!inv.feasible) col.appendChild(el("div", { class: "bad" }, "Infeasible: " + inv.problems.join(" ")));
      host.appendChild(col);
    });
  }

  // ---- bill of materials ------------------------------------------------------------------
  function bom() {
    const values = [];
    variants.forEach((v) => v.inventory.lines.forEach((l) =>
      values.push({ variant: v.name, category: l.category, item: l.item, cost_usd: l.cost_usd, count: l.count })));
    const container = document.getElementById("bom-chart");
    if (!values.length) return empty(container, "The topology reported no bill of materials.");
    // Cost by category per variant: the whole cluster, then the network only (without the GPUs,
    // whose cost hides the differences between fabrics).
    const costChart = (host, rows, title) => chart(host, {
      data: { values: rows },
      width: 520, height: { step: 34 },
      mark: { type: "bar", tooltip: true },
      encoding: {
        y: { field: "variant", type: "nominal", title: null, sort: null },
        x: { aggregate: "sum", field: "cost_usd", type: "quantitative", title, axis: { format: "$.3~s" } },
        color: { field: "category", type: "nominal", title: "category" },
        order: { field: "category" },
      },
    });
    costChart(container, values, "cost (USD)");
    const network = values.filter((x) => x.category !== "gpu");
    document.getElementById("bom-network").textContent = "Network (everything but the GPUs): " +
      variants.map((v) => `${v.name} ${fmtUsd(networkCost(v.inventory))} of ${fmtUsd(v.inventory.cost_usd)}, ` +
        `${fmtUsd(networkCost(v.inventory) / Math.max(1, v.inventory.gpus))} per GPU`).join("; ") + ".";
    const netContainer = document.getElementById("bom-network-chart");
    if (!network.length) empty(netContainer, "No network items in the bill of materials.");
    else costChart(netContainer, network, "network cost (USD)");
    const tables = document.getElementById("bom-tables");
    variants.forEach((v, i) => {
      const d = el("details", i === 0 ? { open: "" } : {});
      d.appendChild(el("summary", {}, `${v.name}: ${v.inventory.design}`));
      d.appendChild(table(["item", "category", "tier", "count", "unit price", "cost", "power"],
        v.inventory.lines.map((l) => [l.item, l.category, l.tier, fmtNumber(l.count, 0), priceCell(l),
          included(l) ? "included" : fmtUsd(l.cost_usd), fmtNumber(l.power_w / 1e3, 1) + " kW"]), [0, 1, 2]));
      tables.appendChild(d);
    });
  }

  // ---- bus bandwidth vs message size ------------------------------------------------------
  function busbw() {
    const values = [];
    variants.forEach((v) => v.collectives.forEach((s) => s.rows.forEach((r) => values.push({
      variant: v.name, op: s.op, series: `${v.name} · ${s.algorithm}`, bytes: r.bytes, size: fmtBytes(r.bytes),
      busbw_GBps: r.busbw_GBps, time_us: r.time_us, algorithm: r.algorithm, protocol: r.protocol }))));
    const container = document.getElementById("busbw-chart");
    if (!values.length) return empty(container, "No collective sweep in this scenario.");
    const ops = [...new Set(values.map((x) => x.op))];
    const notes = [];
    ops.forEach((op) => identicalSeries(values.filter((x) => x.op === op), "series", "bytes", "busbw_GBps")
      .forEach((n) => notes.push({ series: `${n.series} (${op})`, of: n.of })));
    showIdentical("busbw-notes", notes, "message size's busbw");
    const layer = {
      mark: { type: "line", point: { filled: false, size: 45 }, tooltip: true, strokeWidth: 2 },
      encoding: {
        x: { field: "bytes", type: "quantitative", title: "message size", scale: { type: "log", base: 2 },
          axis: { labelExpr: "datum.value >= 1073741824 ? datum.value / 1073741824 + ' GiB' : datum.value >= 1048576 ? datum.value / 1048576 + ' MiB' : datum.value >= 1024 ? datum.value / 1024 + ' KiB' : datum.value + ' B'" } },
        y: { field: "busbw_GBps", type: "quantitative", title: "busbw (GB/s)" },
        color: { field: "series", type: "nominal", title: "variant · algorithm" },
        // Variants that coincide stay visible: each variant has its own dash and marker.
        strokeDash: { field: "series", type: "nominal", title: "variant · algorithm",
          scale: { range: dashesFor(new Set(values.map((x) => x.series)).size) } },
        shape: { field: "series", type: "nominal", title: "variant · algorithm" },
        tooltip: [{ field: "series" }, { field: "size" }, { field: "busbw_GBps", format: ".1f" },
          { field: "time_us", format: ".1f" }, { field: "algorithm" }, { field: "protocol" }],
      },
    };
    if (ops.length === 1) {
      chart(container, Object.assign({ data: { values }, width: 640, height: 320, title: ops[0] }, layer));
    } else {
      chart(container, { data: { values }, facet: { field: "op", type: "nominal", title: null }, columns: 2,
        spec: Object.assign({ width: 440, height: 260 }, layer), resolve: { scale: { y: "independent" } } });
    }
  }

  // Dash patterns in legend order: solid, dashed, dotted, dash-dot, ... (one per series). Past
  // these eight, dash-dot patterns with a growing dash, so that a sweep's many points that
  // coincide (the same fabric at several TP degrees) never share a dash: Vega cycles a range.
  const baseDashes = [[1, 0], [8, 4], [2, 3], [10, 3, 2, 3], [4, 4], [12, 6], [1, 5], [6, 2, 1, 2]];
  function dashesFor(n) {
    const out = baseDashes.slice();
    for (let k = 0; out.length < n; k++) out.push([3 + k, 3, 1, 3]);
    return out;
  }

  // ---- iteration time breakdown -----------------------------------------------------------
  function breakdown() {
    const values = [];
    variants.forEach((v) => {
      if (!v.training) return;
      v.training.breakdown.forEach((p, i) => values.push({ variant: v.name, part: p.name, order: i,
        time_s: p.time_us / 1e6, time: fmtTime(p.time_us) }));
    });
    const container = document.getElementById("breakdown-chart");
    if (!values.length) return empty(container, "No training step in this scenario.");
    // Each step's configuration: every job key that changes the result, as results.json has it.
    const notes = document.getElementById("breakdown-config");
    variants.filter((v) => v.training).forEach((v) => {
      const t = v.training;
      notes.appendChild(el("li", {}, `${v.name}: ${t.model}, ${t.parallelism}; ${t.precision} weight GEMMs, ` +
        `${t.attention_kernel} attention, optimizer moments ${t.optimizer_moments}` +
        (t.recompute === "none" ? "" : `, ${t.recompute} recomputation` +
          (t.recompute_modules ? ` of ${t.recompute_modules}` : "")) +
        (t.parallel.pipeline_timing === "closed_form_on_1f1b"
          ? "; DualPipe: its closed form over the simulated 1F1B step" : "") + "."));
      notes.appendChild(el("li", {}, `${v.name} options: ${optionsText(t.options)}.`));
    });
    chart(container, {
      data: { values }, width: 640, height: { step: 38 },
      mark: { type: "bar", tooltip: true },
      encoding: {
        y: { field: "variant", type: "nominal", title: null, sort: null },
        x: { field: "time_s", type: "quantitative", title: "iteration time (s)", stack: "zero" },
        color: { field: "part", type: "nominal", title: "part", sort: { field: "order" } },
        order: { field: "order" },
        tooltip: [{ field: "variant" }, { field: "part" }, { field: "time" }],
      },
    });
  }

  // ---- jitter CDF with p50 / p99 ----------------------------------------------------------
  function jitter() {
    const points = [], marks = [];
    const all = variants.flatMap((v) => (v.training && v.training.jitter ? v.training.jitter.iteration_time_us : []));
    // Seconds for long steps, milliseconds otherwise, so axis labels stay short.
    const [scale, unit] = Math.max(0, ...all) >= 2e6 ? [1e6, "s"] : [1e3, "ms"];
    variants.forEach((v) => {
      const j = v.training && v.training.jitter;
      if (!j || !j.iteration_time_us.length) return;
      const n = j.iteration_time_us.length;
      j.iteration_time_us.forEach((t, i) => points.push({ variant: v.name, time: t / scale, cdf: (i + 1) / n }));
      marks.push({ variant: v.name, time: j.p50_us / scale, label: "p50", y: 0.5 });
      const t = tail(j);
      marks.push({ variant: v.name, time: t.us / scale, label: t.label, y: t.label === "p99" ? 0.99 : 1 });
    });
    const container = document.getElementById("jitter-chart");
    if (!points.length) return empty(container, "No jitter trials in this scenario.");
    const x = { field: "time", type: "quantitative", title: `iteration time (${unit})`, scale: { zero: false } };
    const color = { field: "variant", type: "nominal", title: "variant", sort: null };
    const strokeDash = { field: "variant", type: "nominal", title: "variant", sort: null,
      scale: { range: dashesFor(new Set(points.map((p) => p.variant)).size) } };
    showIdentical("jitter-notes", identicalSeries(points, "variant", "cdf", "time"), "trial's time");
    chart(container, {
      width: 640, height: 320,
      layer: [
        { data: { values: points }, mark: { type: "line", interpolate: "step-after", tooltip: true, strokeWidth: 2 },
          encoding: { x, y: { field: "cdf", type: "quantitative", title: "fraction of iterations ≤ t" }, color, strokeDash } },
        { data: { values: marks }, mark: { type: "rule", strokeDash: [4, 3] }, encoding: { x, color } },
        { data: { values: marks }, mark: { type: "text", align: "left", dx: 3, dy: -4, fontSize: 11 },
          encoding: { x, y: { field: "y", type: "quantitative" }, text: { field: "label" }, color } },
        { data: { values: marks }, mark: { type: "point", filled: true, size: 40, tooltip: true },
          encoding: { x, y: { field: "y", type: "quantitative" }, color } },
      ],
    });
  }

  // ---- inference: an inference job's results.json object (docs/inference.md) -------------
  // Fixed decimals (as `lockstep serve` prints them) so that the cells read back to the JSON's
  // numbers within half their last digit (the browser test does).
  function fixed(x, digits) {
    if (x === null || x === undefined || !isFinite(x)) return "–";
    return x.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
  }
  const ms = (s) => fixed(s * 1e3, 3) + " ms";
  const share = (x) => fixed(x * 100, 1) + "%";
  function inference() {
    const host = document.getElementById("inference-tables");
    const served = variants.filter((v) => v.inference);
    if (!served.length) return empty(host, "No inference job in this scenario.");
    served.forEach((v) => {
      const r = v.inference;
      const tagged = (t, name) => { t.setAttribute("data-variant", v.name); t.setAttribute("data-table", name); return t; };
      host.appendChild(el("h3", {}, v.name));
      const layout = `tp ${r.tp} × pp ${r.pp}` + (r.ep > 1 ? ` × ep ${r.ep}` : "") + `, ${r.replicas} replicas`;
      host.appendChild(el("p", { class: "lead" }, `${r.model} on ${fmtNumber(r.gpus, 0)} × ${r.gpu} (${layout}, ` +
        `${r.precision}); ${fmtNumber(r.requests, 0)} requests, ${r.policy} batching up to ${r.max_batch} ` +
        `(mean decode batch ${fmtNumber(r.mean_decode_batch, 1)}); ${r.engine} engine.`));
      host.appendChild(tagged(table(["latency", "p50", "p90", "p99", "mean"],
        [["TTFT", r.ttft_s], ["TPOT", r.tpot_s], ["end to end", r.e2e_s]].map(([name, q]) =>
          [name, ms(q.p50), ms(q.p90), ms(q.p99), ms(q.mean)])), "latency"));
      host.appendChild(tagged(table(["throughput and cost", "value"], [
        ["output tokens/s (cluster)", fixed(r.output_tokens_per_s, 1)],
        ["output tokens/s per GPU", fixed(r.output_tokens_per_s_per_gpu, 1)],
        ["tokens/s with prompts", fixed(r.total_tokens_per_s, 1)],
        ["requests/s", fixed(r.requests_per_s, 2)],
        ["GPU busy (in steps)", share(r.gpu_busy)],
        ["kernels", share(r.compute_share)],
        ["communication", share(r.network_share)],
        ["MFU (of the BF16 peak)", share(r.mfu)],
        ["HBM bandwidth used", share(r.hbm_utilisation)],
        ["cost per million output tokens", "$" + fixed(r.cost_per_million_tokens_usd, 3)],
        ["energy per million output tokens", fixed(r.energy_kwh_per_million_tokens, 2) + " kWh"],
        ["makespan", fixed(r.makespan_s, 3) + " s"],
      ], [0]), "throughput"));
      host.appendChild(tagged(table(["floor", "time", "kernels", "TP", "EP", "PP"],
        [["decode, batch 1 (per token)", r.decode_batch1], ["prefill, one prompt", r.prefill_one]].map(([name, c]) =>
          [name, ms(c.seconds), ms(c.compute_s), ms(c.tp_s), ms(c.ep_s), ms(c.pp_s)]), [0]), "floors"));
      const ar = r.decode_all_reduce;
      if (ar && ar.algorithms.length) {
        host.appendChild(el("p", {}, `The decode step's TP all-reduce of ${fmtNumber(ar.bytes, 0)} B on each NCCL algorithm ` +
          `and protocol (NCCL's pick: ${ar.picked}):`));
        host.appendChild(tagged(table(["algorithm/protocol", "time", "vs the pick"], ar.algorithms.map((a) =>
          [a.name + (a.name === ar.picked ? " (picked)" : ""), fixed(a.seconds * 1e6, 2) + " µs",
            "×" + fixed(a.seconds / ar.seconds, 2)]), [0]), "all-reduce"));
      }
      if (r.warnings.length) {
        const ul = el("ul", { class: "notes" });
        r.warnings.forEach((w) => ul.appendChild(el("li", {}, "warning: " + w)));
        host.appendChild(ul);
      }
    });
  }

  // ---- link utilisation heat map ----------------------------------------------------------
  function heatmap() {
    const host = document.getElementById("heatmap-charts");
    const maps = variants.filter((v) => v.link_heatmap && v.link_heatmap.links.length);
    if (!maps.length) return empty(host, "No link utilisation was recorded in this run.");
    maps.forEach((v) => {
      const h = v.link_heatmap;
      const buckets = Math.max(...h.links.map((l) => l.utilisation.length));
      const span = Math.max(h.step_us || 0, h.bucket_us * buckets);
      const [scale, unit] = span >= 2e6 ? [1e6, "s"] : span >= 2e3 ? [1e3, "ms"] : [1, "µs"];
      const values = [];
      let peak = 0;
      h.links.forEach((l, rank) => l.utilisation.forEach((u, b) => {
        peak = Math.max(peak, u);
        values.push({ link: l.link, rank, start: b * h.bucket_us / scale, end: (b + 1) * h.bucket_us / scale,
          utilisation: u });
      }));
      const div = el("div", { class: "chart" });
      // Legend ticks with enough digits to tell 0.1% from 0.4% (not every tick "0%").
      const digits = peak > 0 ? Math.max(0, Math.min(4, Math.ceil(-Math.log10(peak * 100)) + 1)) : 0;
      host.appendChild(el("h3", {}, `${v.name}` + (h.source ? ` — ${h.source}` : "") +
        ` (peak ${fmtNumber(peak * 100, digits + 1)}% of line rate, ${fmtTime(h.bucket_us)} per column, ` +
        `${fmtTime(span)} in all)`));
      div.setAttribute("data-span-us", String(span));
      host.appendChild(div);
      // The colour scale spans 0..peak so that a lightly loaded fabric still shows its pattern.
      chart(div, {
        data: { values }, width: 760, height: { step: 16 },
        mark: { type: "rect", tooltip: true },
        encoding: {
          x: { field: "start", type: "quantitative", title: `time into the step (${unit})`,
            scale: { domain: [0, span / scale], nice: false } },
          x2: { field: "end" },
          y: { field: "link", type: "nominal", title: null, sort: { field: "rank" } },
          color: { field: "utilisation", type: "quantitative", title: "utilisation",
            scale: { domain: [0, peak > 0 ? peak : 1], scheme: "inferno", reverse: true },
            legend: { format: `.${digits}%` } },
          tooltip: [{ field: "link" }, { field: "start", format: ".3f", title: `start (${unit})` },
            { field: "utilisation", format: ".1%" }],
        },
      });
    });
  }

  // ---- the scenario itself ----------------------------------------------------------------
  function scenario() {
    document.getElementById("scenario-path").textContent = data.scenario.path;
    document.getElementById("scenario-text").textContent = data.scenario.text;
    const notes = [...data.notes];
    variants.forEach((v) => v.notes.forEach((n) => notes.push(`${v.name}: ${n}`)));
    if (notes.length) {
      const host = document.getElementById("notes");
      host.appendChild(el("h3", {}, "Notes"));
      const ul = el("ul");
      notes.forEach((n) => ul.appendChild(el("li", {}, n)));
      host.appendChild(ul);
    }
  }

  summary();
  why();
  topology();
  bom();
  busbw();
  pushback();
  breakdown();
  jitter();
  inference();
  heatmap();
  scenario();
  window.lockstepReport = { done: Promise.all(pending).then(() => pending.length) };
  window.lockstepReport.done.catch((e) => console.error("lockstep report: a chart failed: " + e));
})();
