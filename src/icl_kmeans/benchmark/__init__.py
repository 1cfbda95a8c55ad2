"""The benchmark (`python -m icl_kmeans bench`), outside the package's core: it imports the core (model, layer,
attention, training, timing) and nothing of the core imports it; cli.py starts it (tests/test_layers.py).

bench.py: the sections and the table (its docstring); bench_stack.py: section 4, stacked training throughput.
"""
