"""Hand-made step programs for the XLA tests."""

from fuzz.program.step_ir import Block, Step, StepProgram


def seed_program(how: str = "mark_step") -> StepProgram:
    """The seed report's program: t1.add_(t0) and then t2 = t1 + t0 in separate
    graphs whose inputs have the same shapes; expect t1=3, t2=4."""
    sync = Step("sync", params={"how": how})
    return StepProgram(blocks=[Block(steps=[
        Step("tensor", params={"data": [1]}, out="t0"),
        Step("tensor", params={"data": [2]}, out="t1"),
        sync,
        Step("add_", ["t1", "t0"]),
        sync,
        Step("add", ["t1", "t0"], out="t2"),
        sync,
        Step("observe", ["t1", "t2"], {"how": "item"}),
    ])])


def read_twice_program() -> StepProgram:
    """t1 read, updated in place, read again: a stale read shows."""
    return StepProgram(blocks=[
        Block(steps=[Step("tensor", params={"data": [1, 2]}, out="t0"),
                     Step("rand", params={"shape": [2], "seed": 3}, out="t1"),
                     Step("sync"), Step("observe", ["t1"])]),
        Block(steps=[Step("add_", ["t1", "t0"]), Step("sync"), Step("observe", ["t1"])], repeat=3),
    ])


def collision_program() -> StepProgram:
    """pytorch/xla#8353 in one program: two graphs {-a, a*b} then {-a, b*b}
    with the same parameter shapes get one graph hash."""
    def graph(x, y, first):
        return [Step("tensor", params={"data": [7, 7]}, out=f"t{first}"),
                Step("tensor", params={"data": [2, 2]}, out=f"t{first + 1}"),
                Step("neg", [f"t{first}"], out=f"t{first + 2}"),
                Step("mul", [f"t{first + x}", f"t{first + y}"], out=f"t{first + 3}"),
                Step("sync"), Step("observe", [f"t{first + 3}"])]
    return StepProgram(blocks=[Block(graph(0, 1, 0)), Block(graph(1, 1, 4))], dtype="float32")


def copy_alias_program() -> StepProgram:
    """a.copy_(b); sync; a.mul_(2); sync; read b: on torch_xla 2.9.0 the in-place
    graph donates the buffer a and b share (found by this fuzzer)."""
    return StepProgram(blocks=[Block(steps=[
        Step("tensor", params={"data": [1, 2, 3]}, out="t0"),
        Step("tensor", params={"data": [4, 5, 6]}, out="t1"),
        Step("sync"), Step("copy_", ["t0", "t1"]), Step("sync"),
        Step("mul_", ["t0"], {"other": 2}), Step("sync"),
        Step("observe", ["t0", "t1"]),
    ])], dtype="float32")


def fills_an_expanded_view(p: StepProgram) -> bool:
    """Whether p writes (fill_ or zero_) through an expanded view. torch_xla 2.9.0 adds such a write
    to the small base once per element of the view (ones(1).expand(3).fill_(5) leaves 13, not 5):
    the mechanism of pytorch/xla#5839, a real bug, found by the generator once it drew these writes."""
    expanded = {s.out for _, s in p.steps() if s.op == "expand"}
    return any(s.op in ("fill_", "zero_") and s.args[0] in expanded for _, s in p.steps())


def without_expanded_fills(p: StepProgram) -> StepProgram:
    """p without its fill_/zero_ steps through an expanded view (and blocks left empty): what the rest of p
    does, judged apart from that bug."""
    expanded = {s.out for _, s in p.steps() if s.op == "expand"}
    blocks = []
    for b in p.blocks:
        steps = [Step(s.op, list(s.args), dict(s.params), s.out) for s in b.steps
                 if not (s.op in ("fill_", "zero_") and s.args[0] in expanded)]
        if steps:
            blocks.append(Block(steps=steps, repeat=b.repeat, sizes=dict(b.sizes)))
    return StepProgram(blocks=blocks, dtype=p.dtype, settings=p.settings)


def expanded_fill_program() -> StepProgram:
    """ones(1) expanded to 3 elements, filled with 5 through the view: eager leaves t0 = [5]."""
    return StepProgram(blocks=[Block(steps=[
        Step("full", params={"shape": [1], "value": 1}, out="t0"),
        Step("expand", ["t0"], {"shape": [3]}, out="t1"),
        Step("fill_", ["t1"], {"other": 5}),
        Step("sync"),
        Step("observe", ["t0"], {"how": "cpu"}),
    ])], dtype="float32")
