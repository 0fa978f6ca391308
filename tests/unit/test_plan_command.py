"""python -m core.plan on good and bad arguments: one JSON object with exactly the documented keys, or a non-zero
exit with one line on stderr."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from core.assets import ASSETS

ROOT = Path(__file__).resolve().parents[2]
KEYS = ["gpu", "gpus_per_copy", "copies", "gpus", "monthly_cost", "cost_per_m_input", "cost_per_m_output", "cost_range"]
BUDGET_KEYS = ["realistic_cost_per_m_output", "way_to_pay", "monthly_cost_by_month"]
TASK = ["--rpm", "300", "--prompt", "1500", "--output", "400", "--ttft", "2", "--tokens-per-s", "20"]


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "core.plan", *args], cwd=ROOT, capture_output=True, text=True, timeout=120
    )


def test_the_task_prints_one_json_object_with_the_plan_and_its_runners_up():
    done = run("--model", "llama-3.1-70b", *TASK, "--gpu", "h100-sxm", "--gpu", "l40s", "--price", "l40s=1.5")
    assert done.returncode == 0, done.stderr
    assert done.stderr == "" and len(done.stdout.strip().splitlines()) == 1
    out = json.loads(done.stdout)
    assert list(out) == [*KEYS, "runners_up", *BUDGET_KEYS]
    # sized under load: 12 H100s (tests/unit/test_plan_search.py's hand calculation)
    assert out["gpu"] == "h100-sxm" and out["gpus"] == 12 and out["gpus"] == out["copies"] * out["gpus_per_copy"]
    low, high = out["cost_range"]
    assert low <= out["monthly_cost"] <= high
    assert out["runners_up"] and all(list(r) == KEYS for r in out["runners_up"])
    l40s = [r for r in out["runners_up"] if r["gpu"] == "l40s"]
    assert l40s and all(r["monthly_cost"] == pytest.approx(r["gpus"] * 1.5 * 730) for r in l40s)
    costs = [out["monthly_cost"], *(r["monthly_cost"] for r in out["runners_up"])]
    assert costs == sorted(costs)


def test_a_config_file_and_pinned_gpus_per_copy(tmp_path):
    models = json.loads((ASSETS / "llm_presets.json").read_text(encoding="utf-8"))["models"]
    entry = next(m for m in models if m["id"] == "llama-3.1-8b")
    path = tmp_path / "config.json"
    path.write_text(json.dumps(entry["config"]))
    done = run("--model", str(path), *TASK, "--tp", "2")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["gpus_per_copy"] == 2 and all(r["gpus_per_copy"] == 2 for r in out["runners_up"])


@pytest.mark.parametrize(
    ("args", "code", "words"),
    [
        (["--model", "llama-3.1-70b", *TASK, "--gpu", "h100-sxm", "--tp", "1"], 1, "allow 4 GPUs per copy"),
        (["--model", "llama-3.1-70b", *TASK, "--price", "h100-sxm=0"], 2, "price for H100 SXM"),
        (["--model", "llama-3.1-70b", *TASK, "--price", "h100-sxm"], 2, "GPU_ID=DOLLARS_PER_HOUR"),
        (["--model", "llama-3.1-70b", *TASK[:-2]], 2, "--tokens-per-s"),
        (["--model", "llama-3.1-70b", *TASK, "--tp", "3"], 2, "--tp"),
        (["--model", "no-such-model", *TASK], 2, "neither a preset"),
        (["--model", "llama-3.1-70b", "--rpm", "-5", *TASK[2:]], 2, "argument --rpm: -5 cannot be used: it is outside"),
        (["--model", "llama-3.1-70b", *TASK, "--months", "18"], 2, "--months"),
        (["--model", "llama-3.1-70b", *TASK, "--growth", "-100"], 2, "--growth"),
        (["--model", "llama-3.1-70b", *TASK, "--growth", "nan"], 2, "--growth"),
        (["--model", "llama-3.1-70b", *TASK, "--growth", "fast"], 2, "--growth"),
        (["--model", "llama-3.1-70b", *TASK, "--shape", "weekends"], 2, "--shape"),
        (["--model", "llama-3.1-70b", *TASK, "--workbook", "plan.csv"], 2, "--workbook"),
        (["--model", "llama-3.1-70b", *TASK, "--workbook", "/no/such/folder/plan.xlsx"], 2, "--workbook"),
    ],
)
def test_bad_arguments_and_impossible_workloads_exit_non_zero_with_one_line(args, code, words):
    done = run(*args)
    assert done.returncode == code and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0] and lines[0].startswith("python -m core.plan: error:")


def test_the_budget_defaults_to_a_year_of_office_hours_without_growth():
    done = run("--model", "llama-3.1-8b", *TASK, "--gpu", "l4")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["way_to_pay"] in ("on-demand", "reserved-1y", "reserved-3y", "own", "api")
    costs = out["monthly_cost_by_month"]
    assert len(costs) == 12 and costs == [costs[0]] * 12 and costs[0] > 0
    # office hours leave a peak-sized fleet idle much of the day: a realistic 1M output tokens costs more
    assert out["realistic_cost_per_m_output"] > out["cost_per_m_output"]


def test_the_workbook_flag_writes_the_budget_and_the_growth_shows_in_the_months(tmp_path):
    path = tmp_path / "plan.xlsx"
    args = ["--months", "24", "--growth", "5", "--shape", "24-7", "--workbook", str(path)]
    done = run("--model", "llama-3.1-70b", *TASK, "--gpu", "h100-sxm", *args)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    costs = out["monthly_cost_by_month"]
    assert len(costs) == 24 and costs[-1] > costs[0]
    data = path.read_bytes()
    assert data[:2] == b"PK" and b"Assumptions" in zipfile.ZipFile(path).read("xl/workbook.xml")
