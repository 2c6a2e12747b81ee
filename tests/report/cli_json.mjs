// The commands' `--format json` print the objects results.json holds (one schema per result
// kind, docs/results.schema.json): `train` prints the training object, `collective --scenario`
// the collectives, `topo` the inventory. Runs each command on SCENARIO, validates its output
// against the kind's definition with Ajv, and compares it with RESULTS, the results.json of
// `lockstep run SCENARIO`.
// Usage: node cli_json.mjs SCHEMA.json LOCKSTEP SCENARIO.yaml RESULTS.json
import { createRequire } from "node:module";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { isDeepStrictEqual } from "node:util";

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(join(here, "../../report/web/package.json"));
const Ajv = require("ajv");

const [schemaPath, lockstep, scenario, resultsPath] = process.argv.slice(2);
const schema = JSON.parse(readFileSync(schemaPath, "utf8"));
const results = JSON.parse(readFileSync(resultsPath, "utf8"));
const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true });
ajv.addSchema(schema);
const problems = [];

function command(args) {
  return JSON.parse(execFileSync(lockstep, args, { encoding: "utf8", maxBuffer: 1 << 28 }));
}

function validate(what, value, definition) {
  const check = ajv.getSchema(`${schema.$id}#/definitions/${definition}`);
  if (check(value)) return;
  for (const e of check.errors) {
    problems.push(`${what}: ${e.instancePath || "/"} ${e.message} ${JSON.stringify(e.params)}`);
  }
}

function same(what, actual, expected) {
  if (isDeepStrictEqual(actual, expected)) return;
  problems.push(`${what} differs from results.json:\n  command: ${JSON.stringify(actual).slice(0, 600)}\n  results: ${JSON.stringify(expected).slice(0, 600)}`);
}

const variant = results.variants[0];

const training = command(["train", scenario, "--format", "json"]);
validate("train --format json", training, "training");
same("train --format json", training, variant.training);

const sweeps = command(["collective", "--scenario", scenario, "--format", "json"]);
if (!Array.isArray(sweeps)) problems.push("collective --format json is not an array");
else sweeps.forEach((s, i) => validate(`collective --format json [${i}]`, s, "sweep"));
same("collective --format json", sweeps, variant.collectives);

const inventory = command(["topo", scenario, "--format", "json"]);
validate("topo --format json", inventory, "inventory");
// `lockstep run` builds the graph, topo only when it must: the bill of materials is the same.
same("topo --format json lines", inventory.lines, variant.inventory.lines);
same("topo --format json tiers", inventory.tiers, variant.inventory.tiers);

if (problems.length) {
  for (const p of problems) console.error("FAIL: " + p);
  process.exit(1);
}
console.log(`cli_json: train, collective and topo --format json match ${resultsPath}`);
