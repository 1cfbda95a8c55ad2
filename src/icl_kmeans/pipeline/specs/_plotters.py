"""Plotters that several specs share, bound to a figure's layout."""


def training_curves(blocks=()):
    """The plotter of a training figure: a block of two rows (training loss, relative validation loss) per
    value of the facet keys `blocks`, a column per value of the other facets."""

    def plot(df, settings, fig_id):
        from ..figures.training import plot_training  # when drawing: the specs stay pure Python

        return plot_training(df, settings, fig_id, blocks=blocks)

    return plot
