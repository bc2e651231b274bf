"""Known torch_xla bugs: a graph-hash audit that catches cache-key collisions
as they happen, and the labels of the bugs generated programs hit."""

from __future__ import annotations

import re
import sys

from fuzz.judge.verdict import Verdict

KNOWN_COLLISION = "https://github.com/pytorch/xla/issues/8353"
MAX_GRAPHS = 20000
_graphs: dict = {}  # graph hash -> IR text, process-wide like the executable cache


class HashAudit:
    """Checks, at every sync, that torch_xla's graph hash of the live tensors
    tells their IR apart: one hash with two IR texts is a cache-key collision
    (pytorch/xla#8353, the seed's class), whether or not the values it then
    serves happen to differ. Process-wide, since the executable cache is."""

    def __init__(self, xlac):
        self.xlac, self.collisions = xlac, []

    def wrap(self, sync):
        def hooked(*a):
            frame = sys._getframe(1)  # the generated steps(): its locals are the live tensors
            values = list(frame.f_locals.values())
            del frame  # hold no frame: an exception's traceback would keep its tensors alive
            self.audit(values)
            return sync(*a)
        return hooked

    def _pending(self, t) -> bool:
        info = self.xlac._get_xla_tensor_debug_info(t)
        ir = next((ln for ln in info.splitlines() if ln.startswith("IR:")), "")
        return "XLAData: None" in info and "xla::device_data" not in ir

    def audit(self, values) -> None:
        import torch

        try:
            # Only pending tensors make a graph; materialised ones are its inputs.
            ts = [v for v in values if isinstance(v, torch.Tensor) and v.device.type == "xla" and self._pending(v)]
            if not ts:
                return
            h, text = self.xlac._get_graph_hash(ts), self.xlac._get_xla_tensors_text(ts)
        except Exception:  # noqa: BLE001 - an audit must not change the case
            return
        # The text names IR values by position only; hashes compare as bytes.
        if len(_graphs) > MAX_GRAPHS:  # a long campaign: forget, rather than grow without bound
            _graphs.clear()
        if _graphs.setdefault(h, text) != text:
            self.collisions.append((_graphs[h], text))


# Known torch_xla 2.9.0 bugs that generated programs hit; a worker or test can
# set such verdicts apart. (message regex, label)
KNOWN_ISSUES = (
    (r"graph-hash collision", KNOWN_COLLISION),
    # a.copy_(b); sync; a.<inplace>; sync -> b's shared buffer was donated (found here, not filed)
    (r"Trying to access XLA data for tensor with ID \d+ while an async operation is in flight"
     r"|buffer with shape \S+ on device \S+ is deleted|called on deleted or donated buffer",
     "param aliasing donates a buffer two tensors share, e.g. after copy_ (torch_xla 2.9.0)"),
)


def known_issue(v: Verdict) -> str | None:
    """The label of the known torch_xla bug a finding matches, else None."""
    if not v.is_finding:
        return None
    for pattern, label in KNOWN_ISSUES:
        if re.search(pattern, v.message):
            return label
    return None
