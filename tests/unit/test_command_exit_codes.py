"""The commands' exit codes, as scripts read them (core.cli): 0 a result, 1 no plan (or a copy that cannot run the
requests), 2 a bad argument, each failure one line on stderr naming what fails and never a traceback; the extreme
values that once ended in a traceback or ran for minutes before failing are each a named case."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TASK = ["--model", "llama-3.1-70b", "--rpm", "300", "--prompt", "1500", "--output", "400", "--ttft", "2"]
TASK += ["--tokens-per-s", "20"]
COPY = ["--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--tp", "1", "--weight-bits", "8", "--kv", "fp8"]
COPY += ["--engine", "vllm", "--prompt", "1000", "--output", "250"]
HUGE = "9" * 401  # a number with 401 digits


def run(module: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", module, *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout
    )


def one_line(done: subprocess.CompletedProcess[str], code: int, *words: str) -> str:
    assert done.returncode == code, done.stderr
    assert done.stdout == "" and "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


def test_a_plan_exits_0_with_its_json():
    done = run("core.plan", *TASK)
    assert done.returncode == 0 and json.loads(done.stdout)["gpus"] >= 1


def test_a_workload_no_allowed_gpu_serves_exits_1_naming_the_nearest_plan():
    one_line(run("core.plan", *TASK, "--gpu", "l4", "--tp", "1"), 1, "no plan", "nearest plan")


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (["--growth", "300", "--months", "36"], ["argument --growth", "at 300% a month", "at most 26.1% a month"]),
        (["--growth", "1e308"], ["argument --growth", "outside -99 … 1,000"]),
        (["--workbook", "/nonexistent/dir/plan.xlsx"], ["argument --workbook", "does not exist"]),
    ],
)
def test_the_plan_command_refuses_a_growth_or_a_target_it_cannot_use_with_exit_2(extra, words):
    one_line(run("core.plan", *TASK, *extra), 2, *words)


@pytest.mark.parametrize(
    ("flag", "value", "words"),
    [
        ("--rpm", "1e308", ["argument --rpm", "outside 0.01 … 1,000,000"]),
        ("--prompt", HUGE, ["argument --prompt", "401 characters"]),
        ("--ttft", "nan", ["argument --ttft", "not a finite number"]),
    ],
)
def test_the_plan_command_reads_numbers_by_the_pages_rule(flag, value, words):
    args = list(TASK)
    args[args.index(flag) + 1] = value
    one_line(run("core.plan", *args), 2, *words)


def test_the_traffic_command_exits_0_with_its_json():
    done = run("core.traffic", *COPY, "--qps", "5", "--requests", "100")
    assert done.returncode == 0 and json.loads(done.stdout)["requests_per_s"] > 0


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (["--qps", "5", "--seed", "-1"], ["argument --seed", "outside 0 …"]),
        (["--qps", "5", "--prompt", HUGE], ["argument --prompt", "401 characters"]),
    ],
)
def test_the_traffic_command_names_the_flag_it_refuses_with_exit_2(extra, words):
    args = list(COPY)
    if "--prompt" in extra:
        args[args.index("--prompt") : args.index("--prompt") + 2] = []
    one_line(run("core.traffic", *args, *extra), 2, *words)


def test_the_traffic_command_refuses_a_huge_config_before_reading_it(tmp_path: Path):
    big = tmp_path / "config.json"
    with big.open("wb") as handle:  # a sparse file of 1 GiB: its size is known without reading it
        handle.truncate(1 << 30)
    args = ["--model", str(big), *COPY[2:], "--offline"]
    one_line(run("core.traffic", *args, timeout=30), 2, "argument --model", "1,073,741,824 bytes")


def test_a_copy_that_cannot_run_the_requests_exits_1():
    args = ["--model", "llama-3.1-405b", "--gpu", "l4", "--tp", "1", "--weight-bits", "16", "--kv", "fp16"]
    args += ["--engine", "vllm", "--prompt", "100", "--output", "10", "--offline"]
    one_line(run("core.traffic", *args), 1, "cannot run", "no KV cache")


def test_retraining_checks_where_it_writes_before_it_trains():
    done = run("core.training", "--discarded-world", "--out", "/nonexistent/dir/x.json", timeout=60)
    one_line(done, 2, "argument --out", "does not exist")
