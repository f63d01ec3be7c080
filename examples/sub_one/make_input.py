#!/usr/bin/env python3
"""Writes the example's input a.npy and the expected b.npy (= a - 1, computed by NumPy in fp32).
Run: .venv/bin/python examples/sub_one/make_input.py"""
import os
import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
a = (np.arange(128 * 512, dtype=np.float32).reshape(128, 512) / 7).astype(np.float32)
np.save(os.path.join(here, "a.npy"), a)
np.save(os.path.join(here, "expected_b.npy"), (a - np.float32(1.0)).astype(np.float32))
