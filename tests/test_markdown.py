"""fuzz/findings/report/markdown.py: data never opens Markdown or HTML structure."""

from fuzz.findings.report import markdown as md

HOSTILE = ["# heading\r\n| a | b |", "```\nrm -rf /\n```", "<script>alert(1)</script>", "[x](http://e)", "@someone #12",
           "1. item", "- item", "a\u2028b\x00c", "`` ` ``"]


def test_text_is_one_line_with_no_structure():
    for s in HOSTILE:
        out = md.text(s)
        assert "\n" not in out and "\r" not in out and "\u2028" not in out and "\x00" not in out
        assert "<" not in out and ">" not in out
        # every pipe, backtick, bracket and hash is escaped
        for ch in "|`[]#@":
            assert out.count(ch) == out.count("\\" + ch), (s, out)
        assert not out.lstrip().startswith(("#", "-", "1.")), out


def test_code_span_fence_outruns_the_text():
    for s in HOSTILE:
        out = md.code(s)
        run = max(len(r) for r in __import__("re").findall(r"`+", s)) if "`" in s else 0
        assert out.startswith("`" * (run + 1)) and out.endswith("`" * (run + 1))
        assert "\n" not in out
        assert "|" not in out.replace("\\|", "")


def test_block_cannot_be_closed_from_inside():
    body = "x\n````\n# not a heading"
    out = md.block(body, "python")
    fence = out.splitlines()[0].rstrip("python")
    assert len(fence) == 5 and out.endswith("\n" + fence)
    assert md.block("y", "py\n# x").startswith("```\n")  # a hostile language tag is dropped


def test_long_text_is_cut():
    assert len(md.text("a" * 10_000)) < 2100
