"""Signatures on real upstream messages: same bug -> one bucket, different bug -> another."""

import pytest

from fuzz.program.ir import OpCall, Program, RunSettings, TensorInput
from fuzz.findings.signature import Signature, innermost_frame, normalize_message, signature
from fuzz.judge.verdict import Outcome, Stage, Verdict

SP = "/usr/lib/python3.12/site-packages"


def err(message, exc_type="RuntimeError", frames=(), outcome=Outcome.COMPILED_ERROR, stage=Stage.EXECUTE):
    return Verdict(outcome=outcome, stage=stage, exc_type=exc_type, message=message, frames=list(frames))


def program(*ops, device="cpu"):
    calls = [OpCall(op=op, args=["x0" if i == 0 else f"v{i - 1}"], params=params, out=f"v{i}")
             for i, (op, params) in enumerate(ops)]
    return Program(sizes={"s0": [4, 5, 6]}, inputs=[TensorInput(name="x0", shape=["s0"], marks=["dynamic"])],
                   ops=calls, outputs=[calls[-1].out], settings=RunSettings(device=device))


# -- the seed bug ---------------------------------------------------------------

# https://github.com/pytorch/pytorch/issues/169760 (the seed: F.pad on a dynamic dim + relu, autotune)
SEED = ("setStorage: sizes [2304], strides [1], storage offset 0, and itemsize 4 requiring a storage size "
        "of 9216 are out of bounds for storage of size 8704")
# The traceback of #169760: run -> autotune_to_one_config -> benchmark_all_configs -> ... clone_preserve_strides
SEED_FRAMES = [
    "/tmp/torchinductor_u/ab/cabcdef.py:120:call",
    f"{SP}/torch/_inductor/runtime/triton_heuristics.py:1272:run",
    f"{SP}/torch/_inductor/runtime/triton_heuristics.py:1048:autotune_to_one_config",
    f"{SP}/torch/_inductor/runtime/triton_heuristics.py:1023:benchmark_all_configs",
    f"{SP}/torch/_inductor/runtime/triton_heuristics.py:1000:clone_args",
    f"{SP}/torch/_inductor/runtime/triton_heuristics.py:980:clone_preserve_strides",
]
# Same message, other numbers, from other upstream reports.
SET_STORAGE_VARIANTS = [
    # https://github.com/pytorch/torchdynamo/issues/872
    "setStorage: sizes [256, 256], strides [4096, 1], storage offset 0, and itemsize 4 requiring a storage "
    "size of 4178944 are out of bounds for storage of size 262144",
    # https://github.com/hpcaitech/ColossalAI/issues/2176
    "setStorage: sizes [640, 640], strides [1, 640], storage offset 54179840, and itemsize 2 requiring a "
    "storage size of 109178880 are out of bounds for storage of size 0",
    # https://github.com/meta-pytorch/opacus/issues/442
    "setStorage: sizes [16, 3, 3, 1, 32, 32], strides [3264, 1088, 34, 1, 34, 1], storage offset 0, and "
    "itemsize 4 requiring a storage size of 209160 are out of bounds for storage of size 208896",
    # the seed at other sizes, and as a log line that repeats the type
    "setStorage: sizes [3136], strides [1], storage offset 0, and itemsize 2 requiring a storage size of "
    "6272 are out of bounds for storage of size 6016",
    "RuntimeError: " + SEED,
]


def test_seed_variants_share_one_signature():
    base = signature(err(SEED, frames=SEED_FRAMES))
    for msg in SET_STORAGE_VARIANTS:
        assert signature(err(msg, frames=SEED_FRAMES)) == base, msg
    assert "clone_preserve_strides" in base.text
    assert "2304" not in base.text and "8704" not in base.text


def test_seed_signature_ignores_line_numbers_install_path_and_kernel_frame():
    moved = [f.replace(SP, "/home/me/venv/lib/python3.10/dist-packages").replace(":980:", ":1111:")
             for f in SEED_FRAMES]
    moved[0] = "/runs/w3/inductor/zz/czzzz.py:77:call"
    assert signature(err(SEED, frames=moved)) == signature(err(SEED, frames=SEED_FRAMES))


def test_same_message_elsewhere_is_another_bug():
    # opacus#442 raises it from user code (as_strided in unfold2d), not from Inductor's autotuner
    opacus = err(SET_STORAGE_VARIANTS[2], frames=["/site/opacus/utils/tensor_utils.py:143:unfold2d"])
    assert signature(opacus) != signature(err(SEED, frames=SEED_FRAMES))


def test_seed_differs_from_other_errors_and_outcomes():
    seed = signature(err(SEED, frames=SEED_FRAMES))
    assert signature(err("CUDA error: an illegal memory access was encountered", frames=SEED_FRAMES)) != seed
    assert signature(err(SEED, exc_type="ValueError", frames=SEED_FRAMES)) != seed
    assert signature(err(SEED, frames=SEED_FRAMES, outcome=Outcome.EAGER_ERROR)) != seed


# -- other real messages ---------------------------------------------------------

# (url, message, exc_type, innermost frames, a variant of the same bug)
REAL = [
    ("https://github.com/pytorch/pytorch/issues/143249",
     "Could not guard on data-dependent expression -u0 > 4 (unhinted: -u0 > 4).  (Size-like symbols: none)\n\n"
     "Caused by: (_meta_registrations.py:4832 in meta_select)\nFor more information, run with TORCH_LOGS=\"dynamic\"",
     "torch.fx.experimental.symbolic_shapes.GuardOnDataDependentSymNode",
     ["/data/users/yidi/pytorch/torch/fx/experimental/symbolic_shapes.py:6495:_evaluate_expr"],
     "Could not guard on data-dependent expression -u3 > 17 (unhinted: -u3 > 17).  (Size-like symbols: none)"),
    ("https://github.com/pytorch/executorch/issues/8988",
     "Could not guard on data-dependent expression Eq(u77 - 1, 1)",
     "torch._dynamo.exc.UserError",
     [f"{SP}/torch/_dynamo/variables/functions.py:120:call_function"],
     "Could not guard on data-dependent expression Eq(u2 - 3, 5)"),
    ("https://github.com/pytorch/pytorch/issues/119414",
     "name 'u0' is not defined", "NameError",
     [f"{SP}/torch/_functorch/_aot_autograd/utils.py:103:call_func_at_runtime_with_args"],
     "name 'u12' is not defined"),
    ("https://github.com/pytorch/pytorch/issues/104102",
     "name 's2' is not defined", "NameError",
     [f"{SP}/torch/_functorch/_aot_autograd/utils.py:103:call_func_at_runtime_with_args"],
     "name 's0' is not defined"),
    ("https://github.com/pytorch/torchdynamo/issues/799",
     "name 'buf24' is not defined", "NameError",
     ["/tmp/torchinductor_u/nd/cnd.py:6011:call"],
     "name 'buf3' is not defined"),
    ("https://github.com/pytorch/pytorch/issues/124006",
     "AssertionError: indices must be int64, byte or bool. Got [torch.float32]",
     "torch._inductor.exc.LoweringException",
     [f"{SP}/torch/_inductor/graph.py:362:call_function", f"{SP}/torch/_inductor/lowering.py:2100:index_put_impl_"],
     "AssertionError: indices must be int64, byte or bool. Got [torch.float32]"),
    ("https://github.com/pytorch/pytorch/issues/97104",
     "AssertionError: target: aten.index_put.default\n  args[0]: TensorBox(StorageBox(ComputedBuffer(name='buf0')))",
     "torch._inductor.exc.LoweringException",
     [f"{SP}/torch/_inductor/graph.py:362:call_function", f"{SP}/torch/_inductor/lowering.py:2053:index_put_"],
     "AssertionError: target: aten.index_put.default\n  args[0]: TensorBox(StorageBox(InputBuffer(name='arg3_1')))"),
    ("https://github.com/pytorch/pytorch/issues/196570",
     "'buf1'", "KeyError",
     ["torch/_inductor/codegen/cpp.py:5743:is_all_write_read_contiguous",
      "torch/_inductor/loop_body.py:300:get_read_expr"],
     "'buf7'"),
    ("https://github.com/pytorch/pytorch/issues/185513",
     "at 12:29:\n    tmp0 = tl.make_tensor_descriptor(in_ptr0, shape=[1024, 128], strides=[128, 1], "
     "block_shape=[XBLOCK, R0_BLOCK]).load([xoffset, r0_offset])\n        ^\nNameError('R0_BLOCK is not defined')",
     "triton.compiler.errors.CompilationError",
     [f"{SP}/torch/_inductor/runtime/triton_heuristics.py:1092:_precompile_config",
      f"{SP}/triton/compiler/compiler.py:80:make_ir"],
     "at 9:41:\n    tmp0 = tl.make_tensor_descriptor(in_ptr1, shape=[64, 32], strides=[32, 1], "
     "block_shape=[XBLOCK, R0_BLOCK]).load([xoffset, r0_offset])\n        ^\nNameError('R0_BLOCK is not defined')"),
    ("https://github.com/pytorch/pytorch/issues/145500",
     "C++ compile error\n\nCommand:\ng++ /tmp/torchinductor_danielthul/"
     "ctokdncd3lqh3uklcegfj2fanld6jbwqtpmk7s2lpcf74fkadoy4/c3tltwsgny45t3ykmpa6l7hab3gk6ekgaylyxcimtihuvyuynwut.cpp"
     " -O3\n\nOutput:\n/tmp/torchinductor_danielthul/ctokdnc/"
     "c3tltwsgny45t3ykmpa6l7hab3gk6ekgaylyxcimtihuvyuynwut.cpp:470:39: error: \u2018s1\u2019 was not declared in this "
     "scope; did you mean \u2018y1\u2019?",
     "torch._inductor.exc.CppCompileError",
     [f"{SP}/torch/_inductor/cpp_builder.py:619:_run_compile_cmd"],
     "C++ compile error\n\nCommand:\ng++ /tmp/torchinductor_bob/xx/cxx.cpp\n\nOutput:\n/tmp/torchinductor_bob/xx/"
     "cqqq.cpp:12:7: error: \u2018s0\u2019 was not declared in this scope; did you mean \u2018y0\u2019?"),
    ("https://github.com/pytorch/pytorch/issues/149789",
     "integer division or modulo by zero", "ZeroDivisionError",
     [f"{SP}/torch/_inductor/loop_body.py:407:__call__", f"{SP}/torch/utils/_sympy/functions.py:300:eval"],
     "integer division or modulo by zero"),
    ("https://github.com/pytorch/pytorch/issues/170130",
     "CUDA error: misaligned address\nCUDA kernel errors might be asynchronously reported at some other API call, "
     "so the stacktrace below might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1",
     "torch.AcceleratorError",
     [f"{SP}/torch/_inductor/select_algorithm.py:2691:benchmark"],
     "CUDA error: misaligned address"),
    ("https://github.com/pytorch/torchdynamo/issues/1365",
     "Triton Error [CUDA]: an illegal memory access was encountered", "RuntimeError",
     ["/home/jansel/torchdynamo/torchinductor/triton_ops/autotune.py:157:run", "<string>:4:launcher"],
     "Triton Error [CUDA]: an illegal memory access was encountered"),
    ("https://github.com/Lightning-AI/litgpt/issues/774",
     "Triton Error [CUDA]: device-side assert triggered", "RuntimeError",
     [f"{SP}/torch/_inductor/triton_heuristics.py:670:run"],
     "Triton Error [CUDA]: device-side assert triggered"),
]


@pytest.mark.parametrize("url,msg,exc,frames,variant", REAL, ids=[r[0].rsplit("/", 3)[1] + r[0].rsplit("/", 1)[1]
                                                                  for r in REAL])
def test_real_variant_shares_signature(url, msg, exc, frames, variant):
    assert signature(err(variant, exc, frames)) == signature(err(msg, exc, frames)), url


def test_real_messages_are_pairwise_distinct():
    sigs = {}
    for url, msg, exc, frames, _ in REAL + [("seed", SEED, "RuntimeError", SEED_FRAMES, None)]:
        s = signature(err(msg, exc, frames))
        assert s.key not in sigs, f"{url} collides with {sigs.get(s.key)}: {s.text}"
        sigs[s.key] = url


def test_normalized_real_messages_read_well():
    assert normalize_message(REAL[0][1]) == ("Could not guard on data-dependent expression -u? > N "
                                             "(unhinted: -u? > N). (Size-like symbols: none)")
    assert normalize_message(REAL[2][1]) == "name 'u?' is not defined"
    assert normalize_message(REAL[3][1]) == "name 's?' is not defined"
    assert normalize_message(REAL[4][1]) == "name 'buf<n>' is not defined"
    # a dtype list is kept: it is what the bug is about
    assert normalize_message(REAL[5][1]).endswith("Got [<dtype>]")  # a dtype is a parameter, as a size is
    # Triton compile errors: the last line says what went wrong
    assert normalize_message(REAL[8][1]) == "at N:N: NameError('R0_BLOCK is not defined')"
    # C++ compile errors: the compiler's "error:" line, with no temp path or hash left
    assert normalize_message(REAL[9][1]) == ("C++ compile error: \u2018s?\u2019 was not declared in this scope; "
                                             "did you mean \u2018y?\u2019?")


def test_backed_and_unbacked_symbols_stay_apart():
    assert signature(err("name 'u0' is not defined", "NameError")) != signature(err("name 's0' is not defined",
                                                                                     "NameError"))


def test_async_cuda_errors_ignore_the_frame():
    a = signature(err("CUDA error: an illegal memory access was encountered", "torch.AcceleratorError",
                      [f"{SP}/torch/_inductor/runtime/triton_heuristics.py:1:run"]))
    b = signature(err("CUDA error: an illegal memory access was encountered", "torch.AcceleratorError",
                      [f"{SP}/torch/cuda/__init__.py:9:synchronize"]))
    assert a == b and a.text.endswith("| -")


# -- normalize_message details ----------------------------------------------------

@pytest.mark.parametrize("a,b", [
    ("expected size 3 at dim 0, got 7", "expected size 12 at dim 2, got 0"),
    ("Expected 2*s0 + 1 == 4*s1", "Expected 2*s3 + 7 == 4*s0"),
    ("ps2 and zuf0 and u1 and s12", "ps0 and zuf3 and u9 and s0"),
    ("shape torch.Size([3, 4]) vs (5, s0)", "shape torch.Size([9]) vs (1, 2, s4)"),
    ("tensor at 0x7f3a2c1b4d30 is <Foo object at 0x55d0c3a0>", "tensor at 0x1 is <Foo object at 0xdeadbeef>"),
    ("in triton_poi_fused_constant_pad_nd_relu_0", "in triton_poi_fused_add_cos_mul_12"),
    ("cpp_fused_add_0 failed", "cpp_fused_constant_pad_nd_relu_sum_3 failed"),
    ("failed /tmp/torchinductor_alice/ab/cabc123def.py", "failed /tmp/torchinductor_bob/zz/czz999yy.py"),
    ("file /home/a/site-packages/torch/_inductor/ir.py",
     "file /opt/conda/lib/python3.11/site-packages/torch/_inductor/ir.py"),
    ("key 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b", "key 2c26b46b68ffc68ff99b453c1d30413413422d70"),
    ("value 1.5e-05 and -3.25", "value 2e+10 and -7"),
    ("arg0_1 primals_3 in_ptr2 getitem_4", "arg12_1 primals_1 in_ptr0 getitem_0"),
    # torch_xla 2.9.0, a donated buffer read again, at two dtypes and shapes
    ("Check failed: !buffer->IsDeleted(): buffer with shape f16[4,1] on device CPU:0 is deleted",
     "Check failed: !buffer->IsDeleted(): buffer with shape s64[2]{0} on device CPU:0 is deleted"),
    # dtypes are parameters: Inductor's Triton refusal of one op, one message per narrow int
    ("atomic_add does not support int8", "atomic_add does not support uint8"),
    ("expected float32, got int64", "expected torch.float16, got torch.int64"),
])
def test_masks_program_dependent_details(a, b):
    assert normalize_message(a) == normalize_message(b)


@pytest.mark.parametrize("a,b", [
    ("in triton_poi_fused_x_0", "in triton_red_fused_x_0"),
    ("worker died: signal 11 (SIGSEGV)", "worker died: signal 6 (SIGABRT)"),
    ("exit code -11", "exit code -9"),
    ("name 'XBLOCK' is not defined", "name 'RBLOCK' is not defined"),
    ("expected f32 buffer", "expected f16 buffer"),  # outside an XLA shape a dtype name stays
])
def test_keeps_what_tells_bugs_apart(a, b):
    assert normalize_message(a) != normalize_message(b)


def test_message_is_one_line_and_bounded():
    n = normalize_message("first line " + "x" * 5000 + "\nsecond line")
    assert "\n" not in n and "second" not in n and len(n) <= 400
    assert normalize_message("") == ""
    assert normalize_message("backend='inductor' raised:\nRuntimeError: boom 3") == \
        "backend='inductor' raised: RuntimeError: boom N"


# -- innermost_frame ---------------------------------------------------------------

def test_innermost_frame_is_module_and_function():
    frames = ["/home/u/proj/fuzz/interp.py:40:run",
              f"{SP}/torch/_dynamo/eval_frame.py:455:_fn",
              f"{SP}/torch/_inductor/lowering.py:2029:index_put",
              f"{SP}/torch/_ops.py:829:__call__",  # forwards only: skipped
              "/tmp/torchinductor_u/ab/cab.py:10:call"]
    assert innermost_frame(frames) == "torch._inductor.lowering:index_put"


def test_innermost_frame_roots():
    assert innermost_frame([f"{SP}/triton/compiler/compiler.py:278:compile"]) == "triton.compiler.compiler:compile"
    assert innermost_frame([f"{SP}/torch_xla/core/xla_model.py:9:mark_step"]) == "torch_xla.core.xla_model:mark_step"
    assert innermost_frame(["/src/pytorch/torch/_inductor/codegen/triton.py:5:load"]) == \
        "torch._inductor.codegen.triton:load"
    assert innermost_frame([r"C:\py\Lib\site-packages\torch\_refs\__init__.py:3:_reshape_view_helper"]) == \
        "torch._refs:_reshape_view_helper"
    assert innermost_frame(["/home/u/fuzz/interp.py:1:f", "<string>:4:launcher"]) == ""
    assert innermost_frame([]) == ""
    # only trampolines: better one of them than nothing
    assert innermost_frame([f"{SP}/torch/_ops.py:829:__call__"]) == "torch._ops:__call__"


# -- value outcomes ----------------------------------------------------------------

def value(outcome=Outcome.DIVERGENCE, where="output 0", **numbers):
    return Verdict(outcome=outcome, stage=Stage.COMPARE, where=where, numbers=numbers)


def test_divergence_signature_is_coarse():
    a = signature(value(where="output 0", max_abs=0.5), program(("pad", {"pad": [1, 1]}), ("relu", {})))
    b = signature(value(where="output 3", max_abs=9.0), program(("relu", {}), ("pad", {"pad": [0, 2]}),
                                                                 ("exp", {})))
    assert a == b
    assert a.text == "divergence | output | families: pad,pointwise | device: cpu"


def test_divergence_signature_separates_kinds():
    p = program(("relu", {}))
    base = signature(value(), p)
    assert signature(value(Outcome.STRIDE), p) != base
    assert signature(value(where="input x0"), p) != base
    assert signature(value(), program(("relu", {}), ("sum", {"dim": 0}))) != base
    assert signature(value(), program(("relu", {}), device="cuda:1")) != base
    assert signature(value(), program(("relu", {}), device="cuda:0")) == \
        signature(value(), program(("relu", {}), device="cuda"))
    assert "families: *" in signature(value()).text


def test_signature_round_trip_and_key_shape():
    s = signature(err(SEED, frames=SEED_FRAMES))
    assert Signature.from_dict(s.to_dict()) == s
    assert len(s.key) == 12 and int(s.key, 16) >= 0
    assert Signature.of_text(s.text) == s


# -- minimal signatures ------------------------------------------------------------

def test_the_neutral_op_is_in_the_op_database():
    from fuzz.program.ir import NEUTRAL_BINARY, NEUTRAL_BINARY_FAMILY, NEUTRAL_FAMILY, NEUTRAL_OP
    from fuzz.program.opdb import OPS

    assert OPS[NEUTRAL_OP].family == NEUTRAL_FAMILY and OPS[NEUTRAL_OP].arity == 1
    assert OPS[NEUTRAL_BINARY].family == NEUTRAL_BINARY_FAMILY and OPS[NEUTRAL_BINARY].arity == 2


def test_minimal_signature_names_what_the_shrunk_program_needs():
    from fuzz.findings.signature import minimal_signature

    p = program(("pad", {"mode": "reflect", "pad": [1, 1], "value": 0.0}), ("nan_to_num", {}))
    m = minimal_signature(value(where="output 1", max_abs=2.0), p)
    assert m.minimal and m.text == ("divergence | output | needs: pad(mode=reflect) > pointwise | marks: dynamic | "
                                    "layout: - | dtype: - | values: - | mode: - | flags: - | device: cpu")
    # a pure function of the program: sizes, widths, names and numbers do not count
    q = program(("pad", {"mode": "reflect", "pad": [2, 0], "value": 0.0}), ("nan_to_num", {}))
    q.sizes = {"s0": [9]}
    assert minimal_signature(value(where="output 0"), q) == m
    assert Signature.from_dict(m.to_dict()) == m and m.to_dict()["minimal"] is True
    # how a dim is made dynamic is one class: mark_dynamic, maybe_mark_dynamic, dynamic=True
    q.inputs[0].marks = ["maybe_dynamic"]
    assert minimal_signature(value(), q) == m
    q.inputs[0].marks, q.settings.dynamic = [], True
    assert minimal_signature(value(), q) == m
    # anything else it names is another bug
    others = [program(("pad", {"mode": "constant", "pad": [1, 1], "value": 0.0}), ("nan_to_num", {})),
              program(("nan_to_num", {}), ("pad", {"mode": "reflect", "pad": [1, 1], "value": 0.0})),
              program(("pad", {"mode": "reflect", "pad": [1, 1], "value": 0.0})),
              program(("pad", {"mode": "reflect", "pad": [1, 1], "value": 0.0}), ("nan_to_num", {}), device="cuda")]
    p2 = program(("pad", {"mode": "reflect", "pad": [1, 1], "value": 0.0}), ("nan_to_num", {}))
    p2.inputs[0].marks = ["unbacked"]
    p3 = program(("pad", {"mode": "reflect", "pad": [1, 1], "value": 0.0}), ("nan_to_num", {}))
    p3.inputs[0].dtype, p3.inputs[0].layout = "bfloat16", "offset"
    p4 = program(("pad", {"mode": "reflect", "pad": [1, 1], "value": 0.0}), ("nan_to_num", {}))
    p4.settings.options, p4.settings.mode = {"cpp_wrapper": True}, "max-autotune"
    keys = {minimal_signature(value(), x).key for x in others + [p2, p3, p4]}
    assert len(keys) == 7 and m.key not in keys
    assert "dtype: half" in minimal_signature(value(), p3).text and "layout: offset" in minimal_signature(value(), p3).text
    assert minimal_signature(value(Outcome.INPUT_MUTATION, "input x0"), p).key != m.key
    # a provisional signature is never a minimal one
    assert not signature(value(), p).minimal and signature(value(), p).key != m.key


def test_minimal_signature_of_an_exception_is_its_message_and_frame_whatever_the_shrink_kept():
    from fuzz.findings.signature import minimal_signature

    p = program(("pad", {"mode": "constant", "pad": [1, 1], "value": 0.0}))
    q = program(("relu", {}), ("sum", {"dim": [0], "keepdim": True}))
    v = err(SEED, frames=SEED_FRAMES)
    m = minimal_signature(v, p)
    assert m.text == signature(v).text + " | device: cpu" and m.minimal and m.key != signature(v).key
    # two shrinks of one bug that kept other ops: one key
    assert minimal_signature(v, q).key == m.key
    assert minimal_signature(err("CUDA error: an illegal memory access was encountered"), p).key != m.key
    # a bare message does not name the bug: the shrunk program's parts do
    bare = err("boom")
    assert " | needs: pad(mode=constant) | " in minimal_signature(bare, p).text
    assert minimal_signature(bare, p).key != minimal_signature(bare, q).key


def test_relaxed_bucket_admits_the_neutral_family():
    from fuzz.findings.signature import in_bucket

    target = "divergence | output | families: pad,view | device: cpu"
    assert in_bucket("divergence | output | families: pointwise | device: cpu", target)
    assert in_bucket("divergence | output | families: pad,pointwise | device: cpu", target)
    assert not in_bucket("divergence | output | families: reduction | device: cpu", target)
    assert not in_bucket("divergence | output | families: pointwise | device: cpu", target, relax_families=False)
