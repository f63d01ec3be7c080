"""``nki.typing`` for birsim: the annotation names kernels import (``from nki.typing import
tensor``). They carry no behaviour while tracing."""

from __future__ import annotations

from ._tracer import Tensor

tensor = Tensor
NkiTensor = Tensor

__all__ = ["tensor", "NkiTensor"]
