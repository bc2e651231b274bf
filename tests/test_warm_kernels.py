"""A shrink's standalone checks start from the kernels its compiles left, and from nothing else
(fuzz/judge/warm_kernels.py): only content-addressed files, never a cached graph or a decision."""

import os

from fuzz.judge.isolated import run_script
from fuzz.judge.warm_kernels import add, reusing, seed


def shrink_caches(tmp_path):
    """A shrink's Inductor and Triton cache dirs, as torch lays them out."""
    ind, tri = tmp_path / "inductor", tmp_path / "triton"
    for rel in ("ab/cabc.cpp", "ab/cabc.so", "ab/kabc.py", "ab/kabc.best_config", "ab/cabc.lock",
                "fxgraph/xy/fxyz/entry", "aotautograd/aa/entry", "cache/pad_mm"):
        (ind / rel).parent.mkdir(parents=True, exist_ok=True)
        (ind / rel).write_text(rel)
    (tri / "HASH").mkdir(parents=True)
    (tri / "HASH" / "k.cubin").write_text("cubin")
    return str(ind), str(tri)


def listing(root):
    return sorted(os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs)


def test_seed_links_the_kernels_only_and_only_inside_a_reusing_block(tmp_path):
    ind, tri = shrink_caches(tmp_path)
    env = {"TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "check" / "inductor"),
           "TRITON_CACHE_DIR": str(tmp_path / "check" / "triton")}
    assert seed(env) == 0 and not (tmp_path / "check").exists()  # no shrink named its caches: a cold check
    with reusing((ind, tri)):
        assert seed(env, python="/no/such/python") == 0  # another interpreter (another torch) compiles its own
        assert seed(env) == 4
    assert listing(env["TORCHINDUCTOR_CACHE_DIR"]) == ["ab/cabc.cpp", "ab/cabc.so", "ab/kabc.py"]
    assert listing(env["TRITON_CACHE_DIR"]) == ["HASH/k.cubin"]
    assert os.stat(os.path.join(env["TORCHINDUCTOR_CACHE_DIR"], "ab", "cabc.so")).st_ino == \
        os.stat(os.path.join(ind, "ab", "cabc.so")).st_ino  # a link, not a copy
    assert not add(ind, tri)  # outside a block: nothing to add to


def test_a_standalone_script_sees_the_shrinks_kernels_in_its_own_fresh_caches(tmp_path):
    ind, tri = shrink_caches(tmp_path)
    script = ("import os\nd = os.environ['TORCHINDUCTOR_CACHE_DIR']\n"
              "print(d.startswith(os.getcwd()), sorted(os.listdir(d)) if os.path.isdir(d) else [])\n")
    with reusing():
        assert add(ind, tri)  # as a LocalRemote names a shrink it computed in a process of its own
        rc, out, err = run_script(script, timeout=60)
    assert rc == 0 and out.split() == ["True", "['ab']"], err
    rc, out, _ = run_script(script, timeout=60)
    assert rc == 0 and out.split() == ["True", "[]"]  # outside the block: empty caches, as before
