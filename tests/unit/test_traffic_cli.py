"""`python -m core.traffic` run as a script: one JSON object with the promised keys, or one line naming the field."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from core import traffic
from core.plan import serving as sv
from core.plan import simulator as sim
from core.plan.engines import profile
from core.plan.kv_memory import gpus
from core.plan.model_config import presets

ROOT = Path(__file__).resolve().parents[2]
BASE = ["--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--tp", "1", "--weight-bits", "8", "--kv", "fp8"]
GOOD = [*BASE, "--engine", "trtllm", "--prompt", "1000", "--output", "100"]


def command(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "core.traffic", *args], cwd=ROOT, capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize("arrivals", [["--offline"], ["--concurrency", "16"], ["--qps", "4", "--seed", "2"]])
def test_good_arguments_print_one_json_object_with_exactly_the_keys(arrivals):
    done = command(*GOOD, *arrivals, "--requests", "200")
    assert done.returncode == 0, done.stderr
    figures = json.loads(done.stdout)
    assert tuple(figures) == traffic.KEYS and done.stdout.count("\n") == 1
    assert figures["output_tokens_per_s"] > 0 and 0 < figures["ttft_p50_s"] <= figures["ttft_p95_s"]
    assert isinstance(figures["max_in_flight"], int) and figures["kv_tokens"] > 100_000


def test_a_closed_loop_is_reported_in_its_steady_state():
    """The first C requests all arrive when the run opens; the command leaves them out, as the calibration does."""
    figures = traffic.run([*GOOD, "--concurrency", "64", "--requests", "256"])
    setup = sv.Setup(presets()["llama-3.1-8b"], gpus()["h100-sxm"], 1, 8, "fp8", sv.default_efficiency())
    result = sim.simulate(
        setup, sim.Traffic("closed", 256, 1000, 100, concurrency=64), sim.engine_limits(setup, profile("trtllm"))
    )
    steady, with_burst = result.summary(skip=64), result.summary()
    assert figures["ttft_mean_s"] == pytest.approx(steady["ttft_mean_s"])
    assert with_burst["ttft_mean_s"] > 1.2 * steady["ttft_mean_s"]


def test_a_config_json_file_is_a_model(tmp_path):
    config = {
        "num_hidden_layers": 32,
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "intermediate_size": 14336,
        "vocab_size": 128256,
        "model_type": "llama",
    }
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    args = ["--model", str(path), *BASE[2:], "--engine", "vllm", "--prompt", "500", "--output", "50", "--offline"]
    done = command(*args, "--requests", "50")
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"--qps": "0"}, "qps"),
        ({"--qps": "-3"}, "qps"),
        ({"--qps": "nan"}, "qps"),
        ({"--qps": "inf"}, "qps"),
        ({"--requests": "100001"}, "requests"),
        ({"--concurrency": "0"}, "concurrency"),
        ({"--engine": "tgi"}, "engine"),
        ({"--gpu": "b200"}, "gpu"),
        ({"--model": "llama-9"}, "model"),
        ({"--prompt": "50000000"}, "prompt"),
        ({"--tp": "3"}, "tp"),
    ],
)
def test_bad_arguments_exit_non_zero_with_one_line_naming_the_field(change, field):
    args = list(GOOD)
    for flag, value in change.items():
        if flag in args:
            args[args.index(flag) + 1] = value
        else:
            args += [flag, value]
    if not {"--qps", "--concurrency"} & set(change):
        args.append("--offline")
    done = command(*args)
    assert done.returncode == 2 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"python -m core.traffic: error: argument --{field}"), done.stderr


def test_missing_arrivals_is_one_line_too():
    done = command(*GOOD)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1
