"""The Python module against the CLI (same code, same numbers) and hand counts."""
import json
import os

import pytest

import lockstep

# Two HGX H100 nodes on NDR InfiniBand, all-reduce from 1 MiB to 64 MiB (7 sizes).
ARGS = dict(system="hgx-h100", nodes=2, fabric="ib-ndr", op="all_reduce",
            min_bytes="1MiB", max_bytes="64MiB")


def test_collective_equals_cli_json(cli):
    code, out, err = cli("collective", "--system", "hgx-h100", "--nodes", "2", "--fabric",
                         "ib-ndr", "--op", "all_reduce", "--min-bytes", "1MiB", "--max-bytes",
                         "64MiB", "--format", "json")
    assert code == 0, err
    expected = json.loads(out)
    got = lockstep.collective(**ARGS)
    assert got["sweeps"] == expected
    # 1 MiB x 2^0..2^6: seven rows, each the CLI's busbw.
    rows = expected[0]["rows"]
    assert [r["bytes"] for r in rows] == [2**20 << i for i in range(7)]
    assert [r["busbw_GBps"] for r in got["records"]] == [r["busbw_GBps"] for r in rows]
    assert all(r["busbw_GBps"] > 0 for r in got["records"])
    assert got["title"].startswith("2 x hgx-h100 (16 GPUs)")


def test_collective_is_deterministic():
    assert lockstep.collective(**ARGS) == lockstep.collective(**ARGS)


def test_fat_tree_switches_by_hand():
    # k = 4 fat tree (docs/topology.md): k pods x k/2 leaves = 8, k pods x k/2 spines = 8,
    # (k/2)^2 cores = 4, for k^3/4 = 16 hosts (2 HGX nodes of 8 GPUs).
    inv = lockstep.topo(builder="fat_tree", k=4)
    tiers = {t["tier"]: t["switches"] for t in inv["tiers"]}
    assert (tiers["leaf"], tiers["spine"], tiers["core"]) == (8, 8, 4)
    assert inv["gpus"] == 16 and inv["nics"] == 16
    scale_out = [r for r in inv["records"] if r["category"] == "switch" and r["tier"] != "scale_up"]
    assert sum(r["count"] for r in scale_out) == 20


def test_topo_of_preset_options_matches_cli(cli):
    code, out, err = cli("topo", "--builder", "preset", "--system", "hgx-h100", "--nodes", "2",
                         "--fabric", "ib-ndr", "--format", "json")
    assert code == 0, err
    got = lockstep.topo(system="hgx-h100", nodes=2, fabric="ib-ndr")
    del got["records"]
    assert got == json.loads(out)


@pytest.mark.parametrize("cli_args,kwargs", [
    (["collective", "--system", "hgx-h999"], dict(system="hgx-h999")),
    (["collective", "--nodes", "0"], dict(nodes=0)),
    (["collective", "--op", "all_reduce", "--min-bytes", "1Q"], dict(op="all_reduce",
                                                                      min_bytes="1Q")),
    (["train", "--model", "llama3-8b", "--tp", "3"], dict(model="llama3-8b", tp=3)),
])
def test_input_error_carries_cli_message(cli, cli_args, kwargs):
    code, out, err = cli(*cli_args)
    assert code == 2
    prefix = "lockstep: error: "
    assert err.startswith(prefix) and err.count("\n") == 1, err
    command = getattr(lockstep, cli_args[0])
    with pytest.raises(lockstep.InputError) as info:
        command(**kwargs)
    assert str(info.value) == err[len(prefix):].rstrip("\n")
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("command,kwargs,flag", [
    ("collective", dict(min_byte="1M"), "--min-byte"),
    ("train", dict(global_batches=8), "--global-batches"),
    ("topo", dict(system="hgx-h100", k=4), "--k"),  # k is a builder's key, not a preset option
])
def test_unknown_option_names_it(command, kwargs, flag):
    with pytest.raises(lockstep.InputError, match=f"^{flag}: not an option of lockstep.{command}"):
        getattr(lockstep, command)(**kwargs)


def test_scenario_error_has_file_line_col(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("version: 1\nname: x\ncluster:\n  system: hgx-h100\n  nodes: many\n")
    with pytest.raises(lockstep.InputError, match=r"bad\.yaml:5:10: cluster\.nodes: expected an integer, got .many.$"):
        lockstep.load(bad).topo()


def test_records_load_into_dataframe():
    pandas = pytest.importorskip("pandas", reason="pandas is not installed (python3-pandas)")
    frame = pandas.DataFrame(lockstep.collective(**ARGS)["records"])
    assert len(frame) == 7
    for column in ["op", "engine", "bytes", "algorithm", "protocol", "time_us", "algbw_GBps",
                   "busbw_GBps"]:
        assert column in frame.columns
    # busbw = algbw x 2 (n - 1) / n for an all-reduce over n = 16 ranks (nccl-tests' PERFORMANCE.md).
    ratio = frame["busbw_GBps"] / frame["algbw_GBps"]
    assert ratio.round(9).eq(round(2 * 15 / 16, 9)).all()


def test_train_equals_cli_json(cli):
    args = ["--system", "hgx-h100", "--nodes", "1", "--fabric", "ib-ndr", "--model",
            "preset=llama3-8b,layers=2", "--tp", "8", "--global-batch", "8", "--engine",
            "analytical"]
    code, out, err = cli("train", *args, "--format", "json")
    assert code == 0, err
    got = lockstep.train(system="hgx-h100", nodes=1, fabric="ib-ndr",
                         model="preset=llama3-8b,layers=2", tp=8, global_batch=8,
                         engine="analytical")
    record = got.pop("records")[0]
    assert got == json.loads(out)
    # The breakdown's parts add up to the iteration time (docs/training.md).
    parts = sum(record[p["name"] + "_us"] for p in got["breakdown"])
    assert parts == pytest.approx(got["iteration_time_us"], rel=1e-9)


def test_serve_equals_cli_json(cli, source_dir):
    path = os.path.join(source_dir, "tests", "python", "serve.yaml")
    code, out, err = cli("serve", path, "--format", "json")
    assert code == 0, err
    got = lockstep.serve(scenario=path)
    record = got.pop("records")[0]
    assert got == json.loads(out)
    assert lockstep.load(path).serve() == dict(got, records=[record])
    for name in ("ttft_s", "tpot_s", "e2e_s"):
        q = got[name]
        assert 0 < q["p50"] <= q["p90"] <= q["p99"] <= q["max"]
        assert record[name + "_p99"] == q["p99"]
    # Llama 3 8B at TP 4, one token decoded against the mean prompt (uniform 128-512: 320 tokens),
    # reads per GPU: 32 layers x 218,103,808 weights (q and o 4096^2, k and v 4096 x 1024, MLP
    # 3 x 4096 x 14,336) plus the 525,336,576-weight output layer, x 2 B / 4 GPUs = 3,752,329,216 B,
    # and the KV cache, 32 layers x 320 tokens x 2 (K, V) x 2 heads x 128 x 2 B = 10,485,760 B.
    assert got["decode_batch1"]["hbm_bytes_per_gpu"] == 3752329216 + 10485760
    # A batch-1 decode step pays one token's time at least: TPOT's floor (docs/inference.md).
    assert got["tpot_s"]["p50"] >= got["decode_batch1"]["seconds"] * (1 - 1e-9)


def test_serve_refuses_other_jobs_and_unknown_options(source_dir):
    with pytest.raises(lockstep.InputError, match="no job"):
        lockstep.serve(scenario=os.path.join(source_dir, "tests", "python", "two_variants.yaml"))
    with pytest.raises(lockstep.InputError, match=r"default.yaml:27:9: job.type: .*type: inference"):
        lockstep.serve(scenario=os.path.join(source_dir, "scenarios", "default.yaml"))
    with pytest.raises(lockstep.InputError, match="--global-batch"):
        lockstep.serve(scenario=os.path.join(source_dir, "tests", "python", "serve.yaml"),
                       global_batch=8)
    with pytest.raises(lockstep.InputError, match="scenario"):
        lockstep.serve(system="hgx-h100")


def test_scenario_run_records_one_row_per_variant(source_dir):
    path = os.path.join(source_dir, "tests", "python", "two_variants.yaml")
    scenario = lockstep.load(path)
    result = scenario.run()
    assert [r["variant"] for r in result["records"]] == [v["name"] for v in result["variants"]]
    assert len(result["records"]) == 2
    assert result == scenario.run()
