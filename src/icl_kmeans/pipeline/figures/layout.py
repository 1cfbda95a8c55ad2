"""Layout checks of a drawn figure: what a reader of the printed page would trip over.

layout_defects(figure) lists, in words, every
    - text artist (titles, labels, tick labels, notes, legends, annotations) that extends past the canvas;
    - two text artists that overlap;
    - text of a panel (a note, a curve's end label, an annotation) that runs out of it (over the next panel);
    - axis with tick labels but no label, where no other axes of its row (y) or column (x) carries one;
    - colourbar without a label;
    - figure wider than a page (PAGE_WIDTH) or text smaller than MIN_FONT_PT at that size.
An empty list: the figure can be printed as it is. tests/test_figure_layout.py runs it on every figure.
"""

from __future__ import annotations

PAGE_WIDTH = 6.75  # inches: a full-width figure of a two-column-free letter page with 1-inch margins
MIN_FONT_PT = 7.0
TOLERANCE_PX = 1.0  # boxes that only touch are not overlapping


def _visible_text(t) -> bool:
    return t.get_visible() and bool(t.get_text().strip())


def _ticklabels(axis) -> list:
    """The tick labels matplotlib draws (ticks inside the view interval, label visible, non-empty)."""
    out = []
    for tick in axis._update_ticks():  # the ticks of this draw; private, but what Axis.draw itself uses
        for label in (tick.label1, tick.label2):
            if tick.get_visible() and _visible_text(label):
                out.append(label)
    return out


def _is_colorbar(ax) -> bool:
    return hasattr(ax, "_colorbar")


def _named(artist) -> str:
    text = artist.get_text() if hasattr(artist, "get_text") else type(artist).__name__
    text = " ".join(text.split())
    return repr(text if len(text) <= 40 else text[:37] + "...")


def text_artists(figure) -> list:
    """(name, artist) of every text the figure draws; a legend counts as one box."""
    out = [(_named(t), t) for t in figure.texts if _visible_text(t)]
    for name in ("_suptitle", "_supxlabel", "_supylabel"):
        t = getattr(figure, name, None)
        if t is not None and _visible_text(t):
            out.append((_named(t), t))
    out += [("legend", lg) for lg in figure.legends if lg.get_visible()]
    for ax in figure.axes:
        if not ax.get_visible():
            continue
        for axis in (ax.xaxis, ax.yaxis) if ax.axison else ():
            out += [(f"tick label {_named(t)}", t) for t in _ticklabels(axis)]
        for t in (ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label):
            if _visible_text(t) and (ax.axison or t is ax.title):
                out.append((_named(t), t))
        out += [(_named(t), t) for t in ax.texts if _visible_text(t)]
        if ax.get_legend() is not None and ax.get_legend().get_visible():
            out.append(("legend", ax.get_legend()))
    unique = {id(a): (n, a) for n, a in out}  # the suptitle is also one of figure.texts
    return list(unique.values())


def _box(artist, renderer):
    return artist.get_window_extent(renderer).padded(-TOLERANCE_PX)


def _overlaps(a, b) -> bool:
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


def _axis_label_defects(figure) -> list[str]:
    defects = []
    axes = [ax for ax in figure.axes if ax.get_visible() and ax.axison and not _is_colorbar(ax)]
    sup = {"x": getattr(figure, "_supxlabel", None), "y": getattr(figure, "_supylabel", None)}

    def shared(ax, which) -> bool:
        if sup[which] is not None and _visible_text(sup[which]):
            return True
        spec = ax.get_subplotspec()
        if spec is None:
            return False
        for other in axes:
            o = other.get_subplotspec()
            if o is None or o.get_gridspec() is not spec.get_gridspec():
                continue
            same = (o.colspan == spec.colspan) if which == "x" else (o.rowspan == spec.rowspan)
            label = other.get_xlabel() if which == "x" else other.get_ylabel()
            if same and label.strip():
                return True
        return False

    for i, ax in enumerate(axes):
        for which, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            label = ax.get_xlabel() if which == "x" else ax.get_ylabel()
            if _ticklabels(axis) and not label.strip() and not shared(ax, which):
                defects.append(f"axes {i} ({ax.get_title()!r}): the {which}-axis has tick labels but no label, "
                               "and no other panel of its " + ("column" if which == "x" else "row") + " has one")
    for ax in figure.axes:
        if _is_colorbar(ax) and ax.get_visible():
            long_axis = ax.yaxis if ax._colorbar.orientation == "vertical" else ax.xaxis
            if not long_axis.label.get_text().strip():
                defects.append("a colourbar has no label")
    return defects


def layout_defects(figure) -> list[str]:
    """Every layout defect of a drawn matplotlib Figure, in words (empty: none)."""
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    defects = []
    width = figure.get_figwidth()
    if width > PAGE_WIDTH + 1e-9:
        defects.append(f"{width:.2f} in wide, more than a page's {PAGE_WIDTH} in")
    canvas = figure.bbox
    texts = text_artists(figure)
    boxes = []
    for name, artist in texts:
        box = _box(artist, renderer)
        boxes.append(box)
        if box.x0 < canvas.x0 or box.y0 < canvas.y0 or box.x1 > canvas.x1 or box.y1 > canvas.y1:
            defects.append(f"{name} extends past the canvas")
        size = artist.get_fontsize() if hasattr(artist, "get_fontsize") else None
        if size is not None and size < MIN_FONT_PT - 1e-9:
            defects.append(f"{name} is set in {size:g} pt, less than {MIN_FONT_PT:g} pt")
        if hasattr(artist, "get_texts"):  # a legend: its entries' sizes
            small = [t for t in artist.get_texts() if t.get_fontsize() < MIN_FONT_PT - 1e-9]
            if small:
                defects.append(f"legend entries in {small[0].get_fontsize():g} pt, less than {MIN_FONT_PT:g} pt")
    for i in range(len(texts)):
        for j in range(i + 1, len(texts)):
            if _overlaps(boxes[i], boxes[j]):
                defects.append(f"{texts[i][0]} overlaps {texts[j][0]}")
    for ax in figure.axes:
        frame = ax.get_window_extent(renderer).padded(TOLERANCE_PX)
        for t in ax.texts:  # notes, end labels, annotations: inside their own panel
            if _visible_text(t):
                b = _box(t, renderer)
                if b.x0 < frame.x0 or b.x1 > frame.x1 or b.y0 < frame.y0 or b.y1 > frame.y1:
                    defects.append(f"note {_named(t)} runs out of its panel")
    return defects + _axis_label_defects(figure)
