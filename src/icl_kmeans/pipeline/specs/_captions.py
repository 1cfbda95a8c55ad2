"""The paragraphs the figures' captions share, and how a caption is put together. A caption is a Jinja
template: the workflow and the review fill in the figure's scale line and its panel line."""

SCALE = "Scale: {{ snakemake.params.scale }}.\n"
PANELS = "{{ snakemake.params.panels }}\n"
CURVES = """\
Curves: median over the S seeds of the scale line; ribbon: inter-quartile range (with 3 seeds, close to
the min-max range); labels are embedding:regularizer (OH one-hot, BN binary,
NA none; NE negative entropy, L2 squared norm).
"""
RELATIVE_LOSS = """\
Relative validation loss: linear axis from the first validation after step 0 (at step 0 it is 10-30 and
would hide the margin around 1), a log axis in a panel whose curves span more than a factor 100 (a diverging
learning rate's); the number after each curve is its final median. A panel whose runs all
stopped at the preset's short M has a grey background and says "(short: M=...)"; a short curve in a long
panel is drawn faint with a dot at its end.
"""


def caption(what: str, *paragraphs: str) -> str:
    """What the figure shows, then the paragraphs (each ending in a newline), a blank line apart."""
    return "\n".join([what + "\n", *paragraphs])
