"""An input made under torch.inference_mode() has no version counter: observing it (a call of a case
whose later call builds its inputs there) gave the probe 'Inference tensors do not track version
counter' and no verdict for the whole item."""

from __future__ import annotations

import torch

from reference_impl.snapshot import snapshot


def test_an_inference_tensor_is_observed_without_a_version() -> None:
    with torch.inference_mode():
        t = torch.ones(3)
    state = snapshot(t)
    assert state.version == -1
    assert snapshot(torch.ones(3)).version == 0
