"""Programs eager refuses on purpose: one op, `eager_rejects`, that breaks an op's contract in a way eager
reports at every call (a dtype the op does not take, an empty input to a resampler, a fill out of the
dtype's range, arithmetic on bools eager rejects). What a compiler must do there is raise the error eager
raises: a compiled function that returns a value is an eager-only-error finding, one that raises an error
of another class a compiled-only-error (fuzz/judge/loop.py ERROR_CLASS). The generator never offers it in
its op menus; strategies/programs.py appends it to a small share of programs (CONTRACT_DRAWS)."""

from __future__ import annotations

from hypothesis import strategies as st

from fuzz.program.opspec import OpSpec
from fuzz.program.ops.common import _fresh, OPS

# Each way, as an expression of the value it reads ({x}): eager raises at every call where the value has an
# element (softmax of an empty integer tensor returns). Each gives the value's shape and dtype back, so an op
# after it types as after the value.
WAYS = {
    "bool_sub": "(({x} > 0) - ({x} < 0)).to({x}.dtype)",  # NotImplementedError: bool - bool
    "bool_rsub": "(1 - ({x} < 0)).to({x}.dtype)",  # NotImplementedError: a number minus a bool tensor
    "bitwise_float": "({x}.float() & {x}.float()).to({x}.dtype)",  # NotImplementedError: bitwise_and of Float
    "softmax_int": "torch.softmax({x}.long(), -1).to({x}.dtype)",  # NotImplementedError: softmax of Long
    "resample_empty": "({x} + F.interpolate({x}.float().flatten()[None, None, :0], size=4).sum().to({x}.dtype))",
    "out_of_range": "torch.full_like({x}, 300, dtype=torch.uint8).to({x}.dtype)",  # RuntimeError: overflow
}
CONTRACT_OPS = ("eager_rejects",)
# What a report names each way by: the torch API whose contract it breaks.
_API = {"bool_sub": "torch.sub", "bool_rsub": "torch.rsub", "bitwise_float": "torch.bitwise_and",
        "softmax_int": "torch.softmax", "resample_empty": "F.interpolate", "out_of_range": "torch.full_like"}


def _check(p) -> str | None:
    return None if p.get("way") in WAYS else f"eager_rejects needs a way, one of {', '.join(WAYS)}"


OPS.add(OpSpec(
    name="eager_rejects", family="pointwise", arity=1,
    accepts=lambda a: True,
    params=lambda args: st.sampled_from(sorted(WAYS)).map(lambda w: {"way": w}),
    check=lambda args, p: _check(p),
    infer=lambda args, p, out: _fresh(args[0], out),
    render=lambda n, p, i: WAYS[p["way"]].format(x=n[0]), grad=False,
    api="", label_fn=lambda p: _API.get(p.get("way"), "torch.sub"),
    doc="an op contract eager enforces at every call, broken on purpose: a compiler must raise as eager does",
))
