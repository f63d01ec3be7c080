"""TensorScalarPtr on the integer paths and the accumulate forms (issue #10 item 6): cases written
from /work/tspint-decisions.md and seed 000 §2-§4 only. Registered by make_cases.py."""


def add_cases(m):
    pass
