"""Table 1: OH vs BN at d = 32, written as CSV and Markdown by its own rule (pipeline/table1.py)."""

from ._captions import SCALE, caption
from ..figure_spec import Figure

ID = "table1"
CAPTION = caption("""\
Table 1: OH vs BN at d = 32 for each k, in two blocks of rows: first with the attention the paper timed,
which materialises the n x n distances and their softmax (the paper-comparable numbers, which the review's
claims check), then with this pipeline's fused, memory-linear attention (what it trains with). Per row: extra embedding dimensions (k for OH, ceil(log2 k) for BN), forward
(train mode) and backward times in ms, peak memory in MB, speedups OH / BN and the memory reduction 1 - BN /
OH. Timings depend on the machine (device in the Markdown file). Paper at k = 1000 on a laptop GPU: 12.14x
forward, 9.54x backward, 69.3% less memory; at k = 6 BN is slightly slower (0.88x).""",
                  SCALE)


def runs(st, s):
    st.evaluations[ID] = st.profile([32], s["table1_k"])


ROW = Figure(ID, "profile", None, "Table 1: OH vs BN at d = 32", evaluation=ID, runs=runs, caption=CAPTION,
             grid="d=32, k in {table1_k}")
