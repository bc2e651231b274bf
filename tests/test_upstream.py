"""`shapefuzz upstream`: the GitHub issue search, against a loopback server
that serves recorded answers (never another host): a hit, no hit, a rate
limit, a malformed answer, and no network (a closed port)."""

import json
import shutil
import socket
import threading
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from fuzz.cli import main
from fuzz.findings.report.bugs import bug_rows
from fuzz.findings.store.corpus import Corpus
from fuzz.findings.status.upstream_search import NO_NETWORK, RATE_LIMITED, SEARCHED, queries

ROOT = Path(__file__).resolve().parent.parent
ERROR_ENTRY = "67edeaa119f4"  # ValueError in torch._inductor.utils:sympy_subs, a person's record with no url
VALUE_ENTRY = "d649e53c6196"  # a divergence (no message), no upstream record yet after the test drops it
XLA_ENTRY = "4e0a2526faf4"  # a torch_xla step program
TODAY = datetime.now(timezone.utc).date().isoformat()

HIT = {"total_count": 3, "items": [
    {"html_url": "https://github.com/pytorch/pytorch/issues/188230", "number": 188230, "state": "closed",
     "title": "index_propagation ValueError 'The argument False is not comparable'\n\x1b[31m"},
    # hostile or malformed items, all dropped: another repo, a number that is not the URL's, a script URL
    {"html_url": "https://github.com/evil/repo/issues/1", "number": 1, "state": "open", "title": "x"},
    {"html_url": "https://github.com/pytorch/pytorch/issues/5", "number": "5", "state": "open", "title": "x"},
    {"html_url": "javascript:alert(1)", "number": 7, "state": "open", "title": "x"},
    "not an item",
]}
NO_HIT = {"total_count": 0, "items": [], "incomplete_results": False}


class Recorded(BaseHTTPRequestHandler):
    """Serves server.answer (status, headers, body) to every GET; records the queries and headers."""

    def do_GET(self):
        status, headers, body = self.server.answer
        self.server.seen.append((parse_qs(urlsplit(self.path).query).get("q", [""])[0], dict(self.headers)))
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def api():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Recorded)
    server.seen, server.answer = [], (200, {}, b"{}")
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    server.url = f"http://127.0.0.1:{server.server_address[1]}"
    yield server
    server.shutdown()
    server.server_close()


def _answer(server, obj, status=200, headers=None):
    body = obj if isinstance(obj, bytes) else json.dumps(obj).encode()
    server.answer = (status, {"Content-Type": "application/json", **(headers or {})}, body)


@pytest.fixture
def corpus(tmp_path, monkeypatch):
    for name in ("GITHUB_TOKEN", "GH_TOKEN", "SHAPEFUZZ_GITHUB_API"):
        monkeypatch.delenv(name, raising=False)
    for key in (ERROR_ENTRY, VALUE_ENTRY, XLA_ENTRY):
        shutil.copytree(ROOT / "corpus" / key, tmp_path / key)
    d = tmp_path / VALUE_ENTRY
    meta = json.loads((d / "meta.json").read_text())
    del meta["upstream"]
    (d / "meta.json").write_text(json.dumps(meta))
    return tmp_path


def _upstream(corpus, key):
    return json.loads((corpus / key / "meta.json").read_text())["upstream"]


def _run(target, url, *extra):
    return main(["upstream", str(target), "--api", url, "--interval", "0", "--timeout", "10", *extra])


def test_a_hit_records_the_valid_candidates_with_the_date_and_keeps_a_persons_record(api, corpus, monkeypatch,
                                                                                       capsys):
    before = _upstream(corpus, ERROR_ENTRY)
    monkeypatch.setenv("GITHUB_TOKEN", "tok123")
    _answer(api, HIT)
    assert _run(corpus / ERROR_ENTRY, api.url) == 0
    rec = _upstream(corpus, ERROR_ENTRY)
    assert rec["checked"] == TODAY and rec["last_search"] == {"at": TODAY, "result": SEARCHED}
    assert [c["url"] for c in rec["candidates"]] == ["https://github.com/pytorch/pytorch/issues/188230"]
    cand = rec["candidates"][0]
    assert cand["state"] == "closed" and cand["number"] == 188230 and set(cand["by"]) == {"message", "frame", "ops"}
    assert "\n" not in cand["title"] and "\x1b" not in cand["title"] and cand["title"].startswith("index_prop")
    assert rec["nearest"] == before["nearest"] and rec["found"] is False  # a person's findings stay
    sent = [q for q, _ in api.seen]
    assert len(sent) == 3 == len(rec["query"]) and all(q.endswith("repo:pytorch/pytorch is:issue") for q in sent)
    assert "not comparable" in sent[0] and "N" not in sent[0].split() and "sympy_subs" in sent[1]
    assert all(h.get("Authorization") == "Bearer tok123" for _, h in api.seen)
    assert "tok123" not in (corpus / ERROR_ENTRY / "meta.json").read_text()
    assert "1 candidate(s)" in capsys.readouterr().out
    row = {r.key: r for r in bug_rows(corpus)}[ERROR_ENTRY]
    assert row.upstream == f"not found upstream ({TODAY}); candidates: https://github.com/pytorch/pytorch/issues/188230"


def _search_part(row):
    """The upstream column's search status, apart from what the entry's release record adds ("; fixed in X")."""
    return row.upstream.split("; fixed in ")[0]


def test_no_hit_is_not_found_with_the_date(api, corpus):
    _answer(api, NO_HIT)
    assert _run(corpus / VALUE_ENTRY, api.url) == 0
    rec = _upstream(corpus, VALUE_ENTRY)
    assert rec["candidates"] == [] and rec["found"] is False and rec["checked"] == TODAY
    assert [q for q, _ in api.seen] == rec["query"] and "Authorization" not in api.seen[0][1]
    row = {r.key: r for r in bug_rows(corpus)}[VALUE_ENTRY]
    assert _search_part(row) == f"not found upstream ({TODAY})"


def test_a_rate_limit_is_reported_and_ends_the_run(api, corpus, capsys):
    before = _upstream(corpus, ERROR_ENTRY)
    _answer(api, {"message": "API rate limit exceeded"}, status=403,
            headers={"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "1800000000"})
    assert _run(corpus, api.url) == 0
    assert len(api.seen) == 1  # the first 403 stops the run: no more requests
    out = capsys.readouterr().out
    assert out.count(RATE_LIMITED) == 3
    rec = _upstream(corpus, ERROR_ENTRY)
    assert rec["last_search"]["result"] == RATE_LIMITED and "HTTP 403" in rec["last_search"]["detail"]
    assert rec["checked"] == before["checked"] and "candidates" not in rec  # nothing claimed searched
    assert _search_part({r.key: r for r in bug_rows(corpus)}[VALUE_ENTRY]) == "not searched upstream yet"


@pytest.mark.parametrize("body, detail", [(b"<html>not json</html>", "not JSON"), (b"[" * 100000, "not JSON"),
                                          (json.dumps({"items": "nope"}).encode(), "no list of items"),
                                          (json.dumps([1, 2]).encode(), "no list of items"),
                                          (json.dumps({"items": [], "pad": "x" * (1 << 20)}).encode(), "bytes")])
def test_a_malformed_answer_is_said_not_stored(api, corpus, body, detail):
    _answer(api, body)
    assert _run(corpus / ERROR_ENTRY, api.url) == 0
    rec = _upstream(corpus, ERROR_ENTRY)
    assert rec["last_search"]["result"] == "not searched (malformed answer)" and "candidates" not in rec
    assert detail in rec["last_search"]["detail"]


def test_no_network_is_not_searched_with_the_date(corpus, capsys):
    with socket.socket() as s:  # a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{s.getsockname()[1]}"
    assert _run(corpus, closed) == 0
    assert capsys.readouterr().out.count(NO_NETWORK) == 3
    rec = _upstream(corpus, VALUE_ENTRY)
    assert rec == {"last_search": {"at": TODAY, "result": NO_NETWORK, "detail": rec["last_search"]["detail"]}}
    assert _search_part({r.key: r for r in bug_rows(corpus)}[VALUE_ENTRY]) == "not searched upstream yet"


def test_dry_run_writes_nothing_and_the_api_comes_from_the_environment(api, corpus, monkeypatch):
    monkeypatch.setenv("SHAPEFUZZ_GITHUB_API", api.url)
    _answer(api, HIT)
    meta = (corpus / ERROR_ENTRY / "meta.json").read_text()
    assert main(["upstream", str(corpus / ERROR_ENTRY), "--interval", "0", "--dry-run"]) == 0
    assert api.seen and (corpus / ERROR_ENTRY / "meta.json").read_text() == meta


def test_an_xla_entry_searches_pytorch_xla_too(corpus):
    entry = Corpus(corpus).load(corpus / XLA_ENTRY)
    qs = queries(entry)
    assert qs and all("repo:pytorch/pytorch repo:pytorch/xla is:issue" in q.q and len(q.q) <= 256 for q in qs)


def test_queries_hold_only_terms_an_issue_would_hold():
    """A value finding's message is the harness's words, a CUDA fault's frame is where it surfaced, and
    shapefuzz's op names are searched by their torch names: none of them is a search term."""
    corpus = Corpus(ROOT / "corpus")
    kinds = {key: {q.kind: q.q for q in queries(corpus.load(ROOT / "corpus" / key))}
             for key in (VALUE_ENTRY, "0839c5693190", "1ea7d2adc643")}
    assert set(kinds[VALUE_ENTRY]) == {"ops"} and "values" not in kinds[VALUE_ENTRY]["ops"]
    assert set(kinds["0839c5693190"]) == {"message", "ops"}  # CUDA error: misaligned address, no frame
    assert kinds["1ea7d2adc643"]["ops"].startswith("add_ cat lt mul_ wrong ")  # mul_scalar_ is Tensor.mul_


def test_an_api_that_is_not_http_is_bad_input(corpus, capsys):
    assert main(["upstream", str(corpus / ERROR_ENTRY), "--api", "file:///etc/passwd"]) == 2
    assert "http(s) URL" in capsys.readouterr().err
