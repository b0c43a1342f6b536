"""COCO's bbob suite (``cocoex``): ``problems.py`` (the functions as harness problems, the
reserved instances, the halves), ``suite.py`` (the suite and its report sections). Run it with
``python -m benchmarks run bbob --half validation --samplers ...``."""
