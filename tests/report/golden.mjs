// Golden test: pins the key numbers of a results.json (per variant: GPUs, switches per tier,
// cost, power, busbw at the largest and a mid-size message of every sweep, iteration time, MFU,
// p50/p99 and lockstep waste) against a checked-in file, with a relative tolerance of 1e-6
// (results are deterministic; the slack absorbs compiler differences in the last bits).
// Usage: node golden.mjs RESULTS.json GOLDEN.json [--update]
import { readFileSync, writeFileSync, existsSync } from "node:fs";

const [resultsPath, goldenPath, flag] = process.argv.slice(2);
const update = flag === "--update" || process.env.LOCKSTEP_UPDATE_GOLDEN === "1";
const results = JSON.parse(readFileSync(resultsPath, "utf8"));

function keyNumbers(r) {
  const out = {};
  for (const v of r.variants) {
    const k = {};
    const inv = v.inventory;
    k.gpus = inv.gpus;
    k.nics = inv.nics;
    for (const t of inv.tiers) k[`switches_${t.tier}`] = t.switches;
    k.cost_usd = inv.cost_usd;
    k.power_w = inv.power_w;
    k.bisection_GBps = inv.bisection_GBps;
    for (const s of v.collectives) {
      if (!s.rows.length) continue;
      const largest = s.rows[s.rows.length - 1];
      const mid = s.rows[Math.floor(s.rows.length / 2)];
      k[`${s.op}_${s.algorithm}_busbw_GBps@${largest.bytes}`] = largest.busbw_GBps;
      k[`${s.op}_${s.algorithm}_time_us@${mid.bytes}`] = mid.time_us;
    }
    const t = v.training;
    if (t) {
      k.iteration_time_us = t.iteration_time_us;
      k.mfu = t.mfu;
      for (const p of t.breakdown) k[`breakdown_${p.name}_us`] = p.time_us;
      if (t.jitter) {
        k.p50_us = t.jitter.p50_us;
        k.p99_us = t.jitter.p99_us;
        k.lockstep_waste_gpu_s = t.jitter.lockstep_waste_gpu_s;
      }
    }
    out[v.name] = k;
  }
  return out;
}

const actual = keyNumbers(results);
if (update) {
  writeFileSync(goldenPath, JSON.stringify(actual, null, 2) + "\n");
  console.log(`golden: wrote ${goldenPath}`);
  process.exit(0);
}
if (!existsSync(goldenPath)) {
  console.error(`golden: ${goldenPath} missing; create it with: node golden.mjs ${resultsPath} ${goldenPath} --update`);
  process.exit(1);
}
const golden = JSON.parse(readFileSync(goldenPath, "utf8"));
const problems = [];
for (const name of new Set([...Object.keys(golden), ...Object.keys(actual)])) {
  if (!(name in actual)) { problems.push(`variant ${name} is gone`); continue; }
  if (!(name in golden)) { problems.push(`variant ${name} is new`); continue; }
  for (const key of new Set([...Object.keys(golden[name]), ...Object.keys(actual[name])])) {
    const want = golden[name][key], got = actual[name][key];
    const same = typeof want === "number" && typeof got === "number"
      ? Math.abs(got - want) <= 1e-6 * Math.max(Math.abs(want), 1e-12) : want === got;
    if (!same) problems.push(`${name}.${key}: golden ${want}, now ${got}`);
  }
}
if (problems.length) {
  for (const p of problems) console.error("FAIL: " + p);
  console.error(`golden: if the change is intended, refresh with: node ${process.argv[1]} ${resultsPath} ${goldenPath} --update`);
  process.exit(1);
}
console.log(`golden: ${Object.keys(actual).length} variants match ${goldenPath}`);
