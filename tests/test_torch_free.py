"""What Snakemake and the plotting environment import must not import torch (1.2 s per job, and the
plot env has none): the shared constants, the studies, the figures and the table helpers."""

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_parse_time_and_plotting_modules_do_not_import_torch():
    code = ("import sys; import icl_kmeans.constants, icl_kmeans.pipeline.studies, icl_kmeans.pipeline.figures, "
            "icl_kmeans.pipeline.table1, icl_kmeans.profile_table, icl_kmeans.emd_table; "
            "from icl_kmeans import FAMILIES; "
            "print(sorted(m for m in sys.modules if m == 'torch' or m.startswith('torch.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(REPO / "src"), "PATH": "/usr/bin:/bin"})
    assert out.stdout.strip() == "[]"
