"""Upstream status without a person: search GitHub's issue search for a corpus
entry's bug (`shapefuzz upstream ENTRY|CORPUS`).

A few queries come from the entry's verdict and program: the masked message
with the masks removed, the innermost torch frame with the exception type, and
the op names with the outcome, each limited to repo:pytorch/pytorch (and
repo:pytorch/xla for an XLA entry) and is:issue. The answers are candidates,
not a verdict: a person confirms one by setting the record's `url`.

Everything the API returns is untrusted data: the answer is read up to a size
cap, and only items of the expected types are kept (a github.com issue URL of a
searched repo, a title cut to a bounded length with control characters
removed, the state open/closed, a positive number). Nothing of it is run.

Failures are answers too: no connection (URLError) is "not searched (no
network)", a 403/429 is "not searched (rate limited)" and stops the run, a
malformed answer is said as such; each is recorded with the date. Stdlib only
(urllib); the base URL is configurable (SHAPEFUZZ_GITHUB_API) so tests point it
at a loopback server, and a token (GITHUB_TOKEN or GH_TOKEN) is sent as an
Authorization header when set, never stored.
"""

from __future__ import annotations

import os
import re
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from datetime import datetime, timezone

DEFAULT_API = "https://api.github.com"
API_ENV = "SHAPEFUZZ_GITHUB_API"
TOKEN_ENVS = ("GITHUB_TOKEN", "GH_TOKEN")
MAX_ANSWER_BYTES = 1 << 20  # a search page of 5 items is a few tens of kB
PER_QUERY = 5  # items asked for (and kept) per query
MAX_CANDIDATES = 10
MAX_TITLE = 200
MAX_QUERY = 200  # GitHub refuses queries over 256 characters
SEARCHED = "searched"
NO_NETWORK = "not searched (no network)"
RATE_LIMITED = "not searched (rate limited)"
_URL = re.compile(r"https://github\.com/([\w.-]{1,100}/[\w.-]{1,100})/(issues|pull)/([0-9]{1,9})")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
# the word an issue about the symptom most likely holds (an exception: its type's name)
_SYMPTOM_WORD = {"divergence": "wrong", "nonfinite": "nan", "stride-mismatch": "stride", "dtype-mismatch": "dtype",
                 "shape-mismatch": "shape", "input-mutation-mismatch": "mutation", "gradient-mismatch": "gradient",
                 "unexpected-recompile": "recompile", "aliasing-mismatch": "alias", "hang": "hang",
                 "crash": "crash"}
_GENERIC_FRAMES = {"run", "call", "wrapper", "inner", "forward", "synchronize", "sync", "compile", "fn", "apply"}
_NOISE_WORDS = {"N", "s", "u", "ps", "zuf", "tmp", "addr", "hash", "path"}


class SearchError(Exception):
    """One query got no usable answer; `status` is what the record says."""

    def __init__(self, status: str, detail: str = ""):
        super().__init__(f"{status}: {detail}" if detail else status)
        self.status, self.detail = status, detail


@dataclass
class Query:
    kind: str  # "message", "frame" or "ops"
    q: str


@dataclass
class Result:
    status: str  # SEARCHED, NO_NETWORK, RATE_LIMITED or "not searched (...)"
    queries: list = field(default_factory=list)  # [{"kind", "q", "total"}] of the queries answered
    candidates: list = field(default_factory=list)  # [{"url", "title", "state", "number", "by"}]
    detail: str = ""


def repos_of(entry) -> list[str]:
    """The repositories an entry's bug may be filed in."""
    return ["pytorch/pytorch", "pytorch/xla"] if entry.program.device_type() == "xla" else ["pytorch/pytorch"]


def _words(text: str, limit: int) -> str:
    """The plain words of a masked text (masks, symbols and punctuation dropped), up to `limit` characters."""
    words = [w.strip("'") for w in re.split(r"[^\w']+", text)]
    out, seen = "", set()
    for w in words:
        if not w or w in _NOISE_WORDS or w.isdigit() or w in seen:
            continue
        seen.add(w)
        if len(out) + len(w) + 1 > limit:
            break
        out = f"{out} {w}".strip()
    return out


def _ops(entry) -> list[str]:
    seen = entry.meta.get("seen_with") if isinstance(entry.meta.get("seen_with"), dict) else {}
    ops = seen.get("ops") if isinstance(seen.get("ops"), list) else None
    if not ops:
        ops = [c.op for c in getattr(entry.program, "ops", [])] + [s.op for _, s in getattr(entry.program, "steps",
                                                                                             list)()]
    from fuzz.program.opdb import OPS

    names = []
    for o in ops:  # the neutral op the shrinker puts in place of ops a bug does not need names no trigger
        if not isinstance(o, str) or not re.fullmatch(r"\w{1,40}", o) or o == "nan_to_num":
            continue
        api = OPS[o].api if o in OPS else ""  # the torch name: mul_scalar_ is Tensor.mul_, item_arange torch.arange
        name = re.sub(r"_scalar(_?)$", r"\1", api.rpartition(".")[2] if api else o)
        if re.fullmatch(r"\w{1,40}", name) and name not in names:
            names.append(name)
    return names[:4]


def queries(entry) -> list[Query]:
    """The search queries for an entry: message, frame and ops, each scoped to its repositories and issues."""
    from fuzz.findings.signature import _ASYNC_CUDA, innermost_frame, normalize_message

    v = entry.verdict
    scope = " ".join(f"repo:{r}" for r in repos_of(entry)) + " is:issue"
    room = MAX_QUERY - len(scope) - 1
    out = []
    exc = (v.exc_type or "").rsplit(".", 1)[-1]
    if not re.fullmatch(r"\w{1,60}", exc):
        exc = ""
    # a value finding's message is the harness's own words ("values mismatch"): no search term
    msg = _words(normalize_message(v.message or ""), room - len(exc) - 1) if exc else ""
    if msg:
        out.append(Query("message", f"{exc} {msg}"))
    func = innermost_frame(v.frames or []).rpartition(":")[2]
    if re.fullmatch(r"\w{1,80}", func) and func.strip("_") not in _GENERIC_FRAMES and not _ASYNC_CUDA.search(
            v.message or ""):  # a CUDA fault surfaces at a later call: its frame is noise
        out.append(Query("frame", f"{func} {exc}".strip()))
    ops = _ops(entry)
    if ops:  # GitHub ANDs the words: the ops and one word of the symptom
        out.append(Query("ops", _words(f"{' '.join(ops)} {exc or _SYMPTOM_WORD.get(v.outcome.value, '')}", room)))
    return [Query(x.kind, f"{x.q} {scope}") for x in out if x.q]


def _token() -> str | None:
    for name in TOKEN_ENVS:
        t = os.environ.get(name, "").strip()
        if t and re.fullmatch(r"[\w.-]{1,400}", t):
            return t
    return None


def _text(value, limit: int) -> str | None:
    if not isinstance(value, str):
        return None
    return " ".join(_CONTROL.sub(" ", value).split())[:limit]


def parse_items(answer, repos: list[str]) -> tuple[int, list[dict]]:
    """(total_count, the valid items) of one search answer; SearchError when it is not a search answer."""
    if not isinstance(answer, dict) or not isinstance(answer.get("items"), list):
        raise SearchError("not searched (malformed answer)", "no list of items")
    total = answer.get("total_count")
    total = total if isinstance(total, int) and not isinstance(total, bool) and total >= 0 else len(answer["items"])
    items = []
    for it in answer["items"][:PER_QUERY]:
        if not isinstance(it, dict):
            continue
        url, number = it.get("html_url"), it.get("number")
        m = _URL.fullmatch(url) if isinstance(url, str) else None
        if not m or m.group(1) not in repos:
            continue
        if not isinstance(number, int) or isinstance(number, bool) or str(number) != m.group(3):
            continue
        title = _text(it.get("title"), MAX_TITLE)
        state = it.get("state") if it.get("state") in ("open", "closed") else "unknown"
        items.append({"url": url, "title": title or "", "state": state, "number": number})
    return total, items


class Client:
    """GitHub's issue search over urllib, one request at a time, `interval` seconds apart."""

    def __init__(self, api: str | None = None, *, timeout: float = 20.0, interval: float | None = None,
                 token: str | None = None):
        api = (api or os.environ.get(API_ENV) or DEFAULT_API).rstrip("/")
        if urllib.parse.urlsplit(api).scheme not in ("http", "https"):
            raise ValueError(f"the GitHub API base must be an http(s) URL, got {api!r}")
        self.api, self.timeout = api, timeout
        self.token = token if token is not None else _token()
        # the search API allows 10 requests a minute without a token, 30 with one
        self.interval = interval if interval is not None else (2.0 if self.token else 6.5)
        self._last = 0.0

    def search(self, q: str, repos: list[str]) -> tuple[int, list[dict]]:
        wait = self._last + self.interval - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        url = f"{self.api}/search/issues?" + urllib.parse.urlencode({"q": q, "per_page": PER_QUERY})
        headers = {"Accept": "application/vnd.github+json", "User-Agent": "shapefuzz-upstream"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        try:
            with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=self.timeout) as r:
                body = r.read(MAX_ANSWER_BYTES + 1)
                remaining = r.headers.get("X-RateLimit-Remaining")
        except urllib.error.HTTPError as e:
            if e.code in (403, 429):
                raise SearchError(RATE_LIMITED, _rate_detail(e.code, e.headers)) from None
            raise SearchError(f"not searched (HTTP {e.code})") from None
        except urllib.error.URLError as e:
            if isinstance(e.reason, (socket.timeout, TimeoutError)):
                raise SearchError("not searched (timed out)", f"no answer in {self.timeout:g}s") from None
            raise SearchError(NO_NETWORK, _text(str(e.reason), 200) or "") from None
        except (socket.timeout, TimeoutError):
            raise SearchError("not searched (timed out)", f"no answer in {self.timeout:g}s") from None
        except (ConnectionError, OSError) as e:  # a connection reset mid-answer
            raise SearchError(NO_NETWORK, _text(str(e), 200) or "") from None
        finally:
            self._last = time.monotonic()
        if len(body) > MAX_ANSWER_BYTES:
            raise SearchError("not searched (malformed answer)", f"over {MAX_ANSWER_BYTES} bytes")
        from fuzz.datafile import DataFileError, loads

        try:  # parsed as any data file: digits and nesting bounded
            answer = loads(body)
        except DataFileError:
            raise SearchError("not searched (malformed answer)", "not JSON") from None
        total, items = parse_items(answer, repos)
        if remaining is not None and remaining.strip() == "0":
            self.interval = max(self.interval, 60.0)  # the next query waits for the window to reset
        return total, items


def _rate_detail(code: int, headers) -> str:
    parts = [f"HTTP {code}"]
    reset = (headers.get("X-RateLimit-Reset") or "").strip() if headers else ""
    retry = (headers.get("Retry-After") or "").strip() if headers else ""
    if reset.isdigit() and len(reset) <= 12:
        parts.append(f"resets at {time.strftime('%H:%M:%S UTC', time.gmtime(int(reset)))}")
    if retry.isdigit() and len(retry) <= 6:
        parts.append(f"retry after {retry}s")
    return ", ".join(parts)


def search_entry(entry, client: Client) -> Result:
    """Run the entry's queries; the first query without an answer ends the search (its status is the result's)."""
    repos = repos_of(entry)
    found: dict[str, dict] = {}
    answered = []
    for qu in queries(entry):
        try:
            total, items = client.search(qu.q, repos)
        except SearchError as e:
            return Result(status=e.status, queries=answered, candidates=_ranked(found), detail=e.detail)
        answered.append({"kind": qu.kind, "q": qu.q, "total": total})
        for it in items:
            found.setdefault(it["url"], {**it, "by": []})["by"].append(qu.kind)
    return Result(status=SEARCHED, queries=answered, candidates=_ranked(found))


def _ranked(found: dict) -> list[dict]:
    """Candidates found by more queries first (then by number, newest first), at most MAX_CANDIDATES."""
    return sorted(found.values(), key=lambda c: (-len(c["by"]), -c["number"]))[:MAX_CANDIDATES]


def merged_record(old, result: Result, today: str | None = None) -> dict:
    """The entry's `upstream` record after a search: a person's findings (url, state, note, nearest, found)
    are kept; `checked`, `query` and `candidates` change only when the search ran; `last_search` always
    says what the last try gave and when."""
    today = today or datetime.now(timezone.utc).date().isoformat()
    rec = dict(old) if isinstance(old, dict) else {}
    rec["last_search"] = {"at": today, "result": result.status, **({"detail": result.detail} if result.detail
                                                                    else {})}
    if result.status == SEARCHED:
        rec["checked"] = today
        rec["query"] = [q["q"] for q in result.queries]
        rec["candidates"] = result.candidates
        rec.setdefault("searched", "GitHub issue search (automatic), issues only")
        if "url" not in rec:
            rec.setdefault("found", False)  # candidates are not a match until a person says so (url)
    return rec


def candidate_urls(rec) -> list[str]:
    """The candidates' URLs of an `upstream` record as read back (untrusted again: each a plain issue URL)."""
    cands = rec.get("candidates") if isinstance(rec, dict) else None
    return [c["url"] for c in cands if isinstance(c, dict) and isinstance(c.get("url"), str)
            and _URL.fullmatch(c["url"])] if isinstance(cands, list) else []


def summary(result: Result) -> str:
    """One line for the terminal."""
    if result.status != SEARCHED:
        return result.status + (f": {result.detail}" if result.detail else "")
    if not result.candidates:
        return "searched: no candidate"
    top = result.candidates[0]
    return (f"searched: {len(result.candidates)} candidate(s), first {top['url']} ({top['state']}) "
            f"{top['title'][:80]!r}")
