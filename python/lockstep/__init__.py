"""lockstep in Python: the CLI's commands in process, returning plain dicts (docs/python.md).

    import lockstep, pandas
    r = lockstep.collective(system="hgx-h100", nodes=2, fabric="ib-ndr", op="all_reduce",
                            min_bytes="1M", max_bytes="1G")
    pandas.DataFrame(r["records"])            # one row per size
    lockstep.load("scenarios/default.yaml").run()["summary"]

Options take the CLI's names with underscores (--gpus-per-node is gpus_per_node); values may be
str, int, float or bool; `fault` and `jitter` take a str or a list of str. Each call returns the
JSON object the command prints with --format json (docs/results.schema.json), plus "records": a
list of flat dicts that pandas.DataFrame accepts. Bad input raises InputError (a ValueError)
with the CLI's one-line message; an internal error raises RuntimeError.
"""

import json as _json

from ._lockstep import InputError
from . import _lockstep

__all__ = ["InputError", "Scenario", "collective", "load", "serve", "topo", "train", "__version__"]
__version__ = _lockstep.version
InputError.__module__ = "lockstep"  # shown as lockstep.InputError in tracebacks

# Options that may repeat on the command line (--fault A --fault B).
_REPEATABLE = ("fault", "jitter")


def _text(key, value):
    """An option's value as the CLI would read it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, str)):
        return str(value) if not isinstance(value, float) else repr(value)
    raise InputError(f"--{key.replace('_', '-')}: expected a str, int, float or bool, "
                     f"got {type(value).__name__}")


def _options(kwargs):
    pairs = []
    for key, value in kwargs.items():
        if value is None:
            continue  # not given, as a CLI option left out
        if key in _REPEATABLE and isinstance(value, (list, tuple)):
            pairs.extend((key, _text(key, v)) for v in value)
        else:
            pairs.append((key, _text(key, value)))
    return pairs


def _scalars(obj, skip=()):
    """The keys of `obj` whose values are not lists or objects (a record's columns)."""
    return {k: v for k, v in obj.items() if not isinstance(v, (list, dict)) and k not in skip}


def topo(**options):
    """`lockstep topo`: the bill of materials and figures of merit of a cluster, from a
    scenario (scenario="file.yaml"), a builder (builder="fat_tree", k=4, ...) or the preset
    options (system="hgx-h100", nodes=2, fabric="ib-ndr"). Records: one row per line of the
    bill of materials."""
    result = _json.loads(_lockstep.topo(_options(options)))
    result["records"] = [dict(line) for line in result["lines"]]
    return result


def collective(**options):
    """`lockstep collective`: {"title", "sweeps": the --format json list, "records": one row per
    size (op, engine, bytes, ..., time_us, algbw_GBps, busbw_GBps)}."""
    result = _json.loads(_lockstep.collective(_options(options)))
    records = []
    for sweep in result["sweeps"]:
        for row in sweep["rows"]:
            record = {"op": sweep["op"], "engine": sweep["engine"],
                      "faults": ", ".join(sweep.get("faults", []))}
            record.update(_scalars(row))
            records.append(record)
    result["records"] = records
    return result


def train(**options):
    """`lockstep train`: the training step as --format json prints it, and one record: its
    scalar figures and each breakdown part as <name>_us."""
    result = _json.loads(_lockstep.train(_options(options)))
    record = _scalars(result)
    for part in result["breakdown"]:
        record[part["name"] + "_us"] = part["time_us"]
    result["records"] = [record]
    return result


def serve(**options):
    """`lockstep serve`: a scenario's inference job (scenario="file.yaml", its job of `type:
    inference`; the preset options override its cluster, trace=, force= and pxn= as --trace,
    --force and --pxn) as --format json prints it, and one record: its scalar figures and each latency
    percentile as <ttft|tpot|e2e>_s_<p50|p90|p99|mean|max>."""
    result = _json.loads(_lockstep.serve(_options(options)))
    record = _scalars(result)
    for name in ("ttft_s", "tpot_s", "e2e_s"):
        for key, value in result[name].items():
            record[f"{name}_{key}"] = value
    result["records"] = [record]
    return result


class Scenario:
    """A scenario file, read and checked by load()."""

    def __init__(self, path, name):
        self.path = str(path)
        self.name = name

    def __repr__(self):
        return f"lockstep.Scenario({self.path!r}, name={self.name!r})"

    def run(self, max_memory=None):
        """`lockstep run` without its files: results.json as a dict, records one row per
        variant (the summary table)."""
        result = _json.loads(_lockstep.run_scenario(self.path, _text("max_memory", max_memory)
                                                    if max_memory is not None else ""))
        result["records"] = [dict(row) for row in result["summary"]]
        return result

    def topo(self):
        """The scenario's cluster, as topo(scenario=path)."""
        return topo(scenario=self.path)

    def collective(self, **options):
        """The scenario's collectives (or the sweep the options name) on its cluster."""
        return collective(scenario=self.path, **options)

    def train(self, **options):
        """The scenario's job on its cluster; options override the job's keys."""
        return train(scenario=self.path, **options)

    def serve(self, **options):
        """The scenario's inference job on its cluster, as serve(scenario=path)."""
        return serve(scenario=self.path, **options)


def load(path):
    """Reads and checks a scenario file (InputError with file:line:col when it is wrong)."""
    return Scenario(path, _lockstep.load(str(path)))
