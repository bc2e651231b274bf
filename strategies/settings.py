"""Compile settings as part of the program: torch.compile modes and Inductor
config flags that change the generated code for dynamic shapes. The menus are
data; keys missing from the installed torch are dropped when compiling
(fuzz/judge/backends.py), so a menu can name flags of newer releases.

Flags that are promises by the user are left out: `assume_aligned_inputs`
with our storage-offset inputs made misaligned-address "findings" that were
the promise being false, not a compiler bug."""

from __future__ import annotations

from hypothesis import strategies as st

MODES_CUDA = (None, "max-autotune-no-cudagraphs", "reduce-overhead", "max-autotune")
# How often each mode is drawn, relative to the others (Hypothesis skews sampled_from: these
# give about 60% default, 20% reduce-overhead, 12% max-autotune-no-cudagraphs, 7% max-autotune).
# Priced on the H100 (docs/benchmarks.md, 2026-11-25): a max-autotune case costs 2x the mean
# (matrix ops under it 5x: GEMM templates), and of the 32 CUDA bugs in corpus/ 27 reproduce in
# the default mode once shrunk, 3 need max-autotune-no-cudagraphs and 2 max-autotune (its weight
# went from 4 to 2 when it was still 13% of cases and 23% of case time). Every
# mode stays drawn; a mode left out gets weight 1.
MODE_WEIGHTS = {None: 7, "reduce-overhead": 6, "max-autotune-no-cudagraphs": 3, "max-autotune": 2}
# A case runs a backward too in one draw of this many, by device type (programs(backward_every=)).
# On the H100 a backward case cost 1.45x a forward one (4.32 s against 2.97 s, 21% of cases and
# 28% of case time) and 3 of the 32 CUDA bugs of corpus/ need one: about 12% of cases there.
BACKWARD_EVERY = {"cpu": 4, "cuda": 6}

# flag -> non-default values to try; each flag is independently on or off.
OPTIONS_CUDA = {
    "triton.autotune_pointwise": (True,),
    "coordinate_descent_tuning": (True,),
    "triton.cudagraphs": (True,),
    "max_autotune_pointwise": (True,),
    "comprehensive_padding": (False,),
    "split_reductions": (False,),
    "triton.persistent_reductions": (False,),
}
OPTIONS_CPU = {
    "comprehensive_padding": (True,),
    "split_reductions": (False,),
    "cpp.simdlen": (1,),
}


# Dynamo's shape settings: flag -> the non-default value tried. Recorded in the
# case and set in its repro; capture_* keep data-dependent ops in the graph.
DYNAMO = {
    "capture_scalar_outputs": True,
    "capture_dynamic_output_shape_ops": True,
    "automatic_dynamic_shapes": False,
    "assume_static_by_default": False,
    "specialize_int": True,
}
# Programs with data-dependent ops flip the capture flags more often.
_CAPTURE = ("capture_scalar_outputs", "capture_dynamic_output_shape_ops")


def dynamo_settings(*, data_dependent: bool = False, flags=tuple(DYNAMO)) -> st.SearchStrategy:
    """torch._dynamo.config overrides drawn from DYNAMO, each flag off (its
    default) first, so they shrink towards {}. With data_dependent, the
    capture flags are drawn on half the time. Flags not in `flags` stay off."""
    def pick(flag, value):
        if flag not in flags:
            return st.just(None)
        coin = (False, True) if data_dependent and flag in _CAPTURE else (False, False, False, True)
        return st.sampled_from(coin).map(lambda on: (flag, value) if on else None)

    return st.tuples(*(pick(k, v) for k, v in DYNAMO.items())).map(lambda pairs: dict(p for p in pairs if p))


def modes(menu) -> st.SearchStrategy:
    """One torch.compile mode of `menu`, drawn by MODE_WEIGHTS; shrinks
    towards the first of `menu`. A menu of one mode draws it as before."""
    menu = tuple(menu)
    if len(menu) == 1:
        return st.sampled_from(menu)
    return st.sampled_from(tuple(m for m in menu for _ in range(MODE_WEIGHTS.get(m, 1))))


# Each flag is on in about one draw of OPTION_ODDS: at one in two a case carried
# 2.9 flags, and coordinate_descent_tuning and triton.cudagraphs add about 1 s
# each to a case on the H100; the shrunk CUDA bugs of corpus/ need at most a few.
OPTION_ODDS = 4
# Flags drawn rarer still: coordinate_descent_tuning made a case 1.5x the mean on the H100 and no
# shrunk bug of corpus/ needs it.
OPTION_ODDS_OF = {"coordinate_descent_tuning": 8}


def compile_options(menu: dict | None) -> st.SearchStrategy:
    """A dict of Inductor config overrides drawn from `menu`, each flag on
    in one draw of OPTION_ODDS. Shrinks towards {} (each flag's draw is 'off'
    first)."""
    if not menu:
        return st.just({})

    def pick(flag, values):
        odds = OPTION_ODDS_OF.get(flag, OPTION_ODDS)
        return st.sampled_from((None,) * (odds - 1) + tuple(values)).map(lambda v: (flag, v))

    return st.tuples(*(pick(k, v) for k, v in menu.items())).map(
        lambda pairs: {k: v for k, v in pairs if v is not None})
