"""Settings flow one way: common.smk resolves them once; a job reads what its rule hands it (params,
inputs, the torch_device resource), never the config or a preset."""

import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from icl_kmeans.pipeline.job_context import job_device

REPO = Path(__file__).resolve().parents[1]
SCRIPTS = sorted((REPO / "workflow" / "scripts").glob("*.py"))
RULE_FILES = sorted((REPO / "workflow" / "rules").glob("*.smk"))


def test_a_job_computes_on_the_device_its_rule_gives_it():
    assert job_device(SimpleNamespace(rule="train", resources=SimpleNamespace(torch_device="cuda"))) == "cuda"
    with pytest.raises(ValueError, match="rule evaluate_multistep .* no torch_device resource"):
        job_device(SimpleNamespace(rule="evaluate_multistep", resources=SimpleNamespace(gpu=1)))


def test_no_job_reads_the_config_or_a_preset():
    for script in SCRIPTS:
        text = script.read_text()
        assert not re.search(r"snakemake\.config|\bresolve\(|load_preset|preset_file\(", text), script.name


def test_every_rule_whose_job_uses_the_device_declares_it():
    device_scripts = {s.name for s in SCRIPTS if "device=True" in s.read_text()}
    assert device_scripts == {"train.py", "evaluate_multistep.py", "evaluate_landscape.py"}
    for path in RULE_FILES:
        # a rule's text runs from its `rule` line to the next one
        for block in re.split(r"\n(?=\s*rule\b)", path.read_text()):
            m = re.search(r'script:\s*"\.\./scripts/(\w+\.py)"', block)
            if m and m.group(1) in device_scripts:
                assert "**TORCH_DEVICE" in block, f"{path.name}: a rule running {m.group(1)} lacks **TORCH_DEVICE"
