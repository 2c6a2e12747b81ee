// Validates a results.json against docs/results.schema.json with Ajv (JSON Schema draft-07), and
// checks the invariants a schema cannot express: breakdowns add up to the iteration time, CDF
// samples are sorted, p50 <= p99 <= max, link queue percentiles ordered; with EXPECT_LINKS set,
// every collective row carries link counters and network totals.
// Usage: node validate_results.mjs SCHEMA.json RESULTS.json
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(join(here, "../../report/web/package.json"));
const Ajv = require("ajv");
const addFormats = require("ajv-formats");

const [schemaPath, resultsPath] = process.argv.slice(2);
const schema = JSON.parse(readFileSync(schemaPath, "utf8"));
const results = JSON.parse(readFileSync(resultsPath, "utf8"));
const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true });
addFormats(ajv);
const validate = ajv.compile(schema);
const problems = [];
if (!validate(results)) {
  for (const e of validate.errors) problems.push(`${e.instancePath || "/"} ${e.message} ${JSON.stringify(e.params)}`);
}
for (const v of results.variants || []) {
  const t = v.training;
  if (!t) continue;
  const sum = t.breakdown.reduce((a, p) => a + p.time_us, 0);
  if (Math.abs(sum - t.iteration_time_us) > 1e-6 * Math.max(1, t.iteration_time_us)) {
    problems.push(`${v.name}: breakdown sums to ${sum} us, iteration is ${t.iteration_time_us} us`);
  }
  const j = t.jitter;
  if (j) {
    for (let i = 1; i < j.iteration_time_us.length; i++) {
      if (j.iteration_time_us[i] < j.iteration_time_us[i - 1]) problems.push(`${v.name}: jitter samples not sorted`);
    }
    if (!(j.p50_us <= j.p99_us && j.p99_us <= j.max_us)) problems.push(`${v.name}: p50 <= p99 <= max fails`);
  }
}
// Link counters (docs/telemetry.md): queue percentiles ordered, no link above the run's totals.
for (const v of results.variants || []) {
  for (const sweep of v.collectives || []) {
    for (const row of sweep.rows) {
      for (const l of row.links || []) {
        if ("queue_p50_bytes" in l && !(l.queue_p50_bytes <= l.queue_p99_bytes && l.queue_p99_bytes <= l.queue_max_bytes))
          problems.push(`${v.name} ${sweep.op} ${row.bytes} B: ${l.name}: queue p50 <= p99 <= max fails`);
        if (row.network && (l.drops > row.network.drops || l.pfc_pauses > row.network.pfc_pauses || l.bytes > row.network.bytes))
          problems.push(`${v.name} ${sweep.op} ${row.bytes} B: ${l.name} counts more than the whole network`);
      }
      if (process.env.EXPECT_LINKS && !(row.links && row.links.length && row.network))
        problems.push(`${v.name} ${sweep.op} ${row.bytes} B: no link counters (EXPECT_LINKS)`);
    }
  }
}
if (problems.length) {
  for (const p of problems) console.error("FAIL: " + p);
  process.exit(1);
}
console.log(`validate_results: ${resultsPath} is valid against ${schemaPath}`);
