"""Benchmark: how well and how fast the redactor removes secrets, against detect-secrets.

Run: ``.venv/bin/python benchmarks/bench_redact.py [--json] [--runs N] [--size-mb X]
[--baseline-kb N] [--misses] [--no-baseline]``

Quality, on the corpus of ``benchmarks/redaction_corpus.py`` (fake secrets of 50 kinds in 12
to 20 contexts each, and placeholders and ordinary values of the same shapes): per kind, the
recall (share of secret samples where no secret substring survives ``redact_text``) and the
false-alarm rate (share of non-secret samples whose text changed), and the totals of each
group: the kinds docs/redaction.md claimed first, the kinds added next, the shapes a
scanner's rule tests found missing, and the tools' password places issue 26 found leaking.
**Targets: recall >= 99% on claimed kinds, the shapes and the tools' places, >= 90% on added
kinds; false alarms <= 10%.** Then the scanners' own rule tests (``benchmarks/
scanner_cases.py``: gitleaks' and detect-secrets' published positives and negatives, taken as
data): recall on their positives, false alarms on their negatives (**targets: >= 99%, <=
10%**), and how many of the cases set aside (each with its reason) the redactor changes.

Speed: ``redact_text`` on inputs of ``--size-mb`` (1 MB) each: ordinary prose and code (the
reference), and adversarial ones: near-miss token prefixes, runs of secret keywords, of
``%20``, of ``\\n`` escapes and of ``=``, a base64 blob, PEM headers with no END. Median of
``--runs`` after a warm-up, in seconds per MB and MB/s. **Target: worst case <= 0.5 s per MB.**
And what a fresh process pays (a hook that redacts one line): the import, then the first
``redact_text`` of the example session state and of a line of secrets, in CPU time, the median
of ``3 x --runs`` processes.

Baseline, measured in the same run: detect-secrets (the maintained scanner from Yelp, its
default plugins and filters) on the same corpus. Each sample is written to a file named after
its context (``.py``, ``.yaml``, ``.json``, ``.env``, ...) and scanned with
``detect_secrets.core.scan.scan_file``, the path ``detect-secrets scan`` takes. Redacting with
it means removing the values it reports ("values"); since it is built to flag lines rather
than to locate secrets, the totals also give the generous reading of dropping every line it
flags ("lines"). Its speed is measured on ``--baseline-kb`` (100 KB) of the ordinary input
and given per MB. If detect-secrets is not installed the report says so and the rest runs.

Exit status: 0 whether or not the targets are met (the report says which); 1 when the corpus
is unsound (a sample whose secret does not occur in its text, or a kind with fewer than 10
contexts), since the figures would then not measure what they claim to.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from redaction_corpus import (
    ALL_KINDS,
    ALNUM,
    B64,
    GROUPS,
    Sample,
    Score,
    build,
    evaluate,
    score,
    total,
)
from scanner_cases import CASES, SET_ASIDE

from clm_policy import __version__
from clm_policy.memory.redact import redact_text

TARGET_RECALL = {"claimed": 0.99, "added": 0.90, "shapes": 0.99, "tools": 0.99}
TARGET_SCANNER_RECALL = 0.99
TARGET_FALSE_ALARMS = 0.10
TARGET_S_PER_MB = 0.5
MIN_CONTEXTS = 10
DEFAULT_RUNS = 3
SEED = 20240514


class BenchError(Exception):
    """The corpus does not measure what it claims to."""


def check_corpus(samples: Sequence[Sample]) -> None:
    for s in samples:
        for secret in s.secrets:
            if secret not in s.text:
                raise BenchError(f"{s.kind}/{s.context}: its secret is not in its text")
    for kind in ALL_KINDS:
        found = {s.context for s in samples if s.kind == kind and s.is_secret}
        if len(found) < MIN_CONTEXTS:
            raise BenchError(f"{kind}: {len(found)} contexts, fewer than {MIN_CONTEXTS}")
        if not any(s.kind == kind and not s.is_secret for s in samples):
            raise BenchError(f"{kind}: no non-secret samples")


def ours(text: str) -> str:
    return redact_text(text).text


# --- the baseline: detect-secrets --------------------------------------------------------------

SUFFIX = {
    "python": ".py",
    "json": ".json",
    "json-escaped": ".json",
    "yaml": ".yaml",
    "kubernetes": ".yaml",
    "toml": ".toml",
    "xml": ".xml",
    "go": ".go",
    "javascript": ".js",
    "php": ".php",
    "ruby": ".rb",
    "ini": ".ini",
    "dotenv": ".env",
    "shell-export": ".sh",
    "cli": ".sh",
    "curl": ".sh",
    "markdown": ".md",
    "prose": ".md",
    "terraform": ".tf",
}


def _filename(context: str) -> str:
    context = context.split("-", 2)[-1] if context.startswith("placeholder-") else context
    return "Makefile" if context.startswith("makefile") else "sample" + SUFFIX.get(context, ".txt")


class DetectSecrets:
    """detect-secrets' default plugins and filters, scanning one file per text."""

    def __init__(self, folder: Path) -> None:
        from importlib.metadata import version

        from detect_secrets.core.scan import scan_file
        from detect_secrets.settings import default_settings

        self.version = version("detect-secrets")
        self._scan_file = scan_file
        self._settings = default_settings
        self.folder = folder

    @contextlib.contextmanager
    def session(self) -> Iterator[None]:
        with self._settings():
            yield

    def write(self, text: str, context: str) -> str:
        """``text`` in a file named after ``context`` (detect-secrets reads the extension)."""
        path = self.folder / _filename(context)
        path.write_text(text, encoding="utf-8")
        return str(path)

    def scan(self, path: str) -> list[tuple[int, str]]:
        """(line number, reported value) for each finding in the file."""
        return [(s.line_number, s.secret_value or "") for s in self._scan_file(path)]


# --- speed inputs -----------------------------------------------------------------------------

WORDS = [
    *("the", "agent", "read", "the", "file", "and", "ran", "the", "tests", "then", "it"),
    *("fixed", "a", "bug", "in", "the", "parser", "while", "reviewer", "asked", "for"),
    *("token", "budget", "secret", "santa", "password", "policy", "author", "key", "api"),
]
NEAR_MISSES = [
    *("ghp_", "gho_", "ghs_", "ghr_", "github_pat_", "AKIA", "ASIA", "sk-", "sk-ant-api03-"),
    *("sk-ant-admin01-", "sk-proj-", "xoxb-", "xapp-", "AIza", "eyJ", "eyJhbGciOi.eyJ"),
    *("npm_", "pypi-AgEIcHlwaS5vcmc", "sk_live_", "rk_test_", "hf_", "api_org_", "glpat-"),
    *("glptt-", "GR1348941", "gldt-", "a1b2Q~", "dckr_pat_", "dop_v1_", "SK", "SG.", "shpat_"),
    *("ATATT3", "dapi", "HRKU-", "hooks.slack.com/services/T", "https://u:", "Bearer "),
    *("Authorization: Basic ", "-----BEGIN PRIVATE KEY-----", "password=", "token: "),
    *("aws_secret_access_key=", "--password ", "%22apiKey%22%3A%22"),
]


def _fill(size: int, piece: Callable[[], str]) -> str:
    out: list[str] = []
    n = 0
    while n < size:
        out.append(piece())
        n += len(out[-1])
    return "".join(out)[:size]


def speed_inputs(size: int) -> dict[str, str]:
    """Inputs of ``size`` characters (ASCII, so bytes): ordinary text, then adversarial ones."""
    rng = random.Random(SEED)

    def ordinary() -> str:
        kind = rng.randrange(3)
        if kind == 0:
            return " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 20))) + ".\n"
        if kind == 1:
            step = rng.randint(1, 999)
            return json.dumps({"step": step, "tokens": step * 37, "output": "ok\nran tests"}) + "\n"
        return f"def step_{rng.randint(1, 99)}(x):\n    return x + {rng.randint(1, 9)}\n"

    def near_miss() -> str:
        tail = "".join(rng.choice(ALNUM) for _ in range(rng.randint(0, 12)))
        return rng.choice(NEAR_MISSES) + tail + rng.choice(" \n,;:")

    def weighted(*pieces: tuple[str, int]) -> Callable[[], str]:
        texts, weights = zip(*pieces, strict=True)
        return lambda: rng.choices(texts, weights)[0]

    b64 = "".join(rng.choice(B64) for _ in range(4096))
    return {
        "ordinary prose and code": _fill(size, ordinary),
        "near-miss token prefixes": _fill(size, near_miss),
        "secret keywords glued": _fill(size, lambda: "password_token_secret_api_key_auth_"),
        "secret keywords and colons": _fill(size, weighted(("password: ", 3), ("token:", 2))),
        "%20 runs": _fill(size, weighted(("%20", 50), ("password%20", 1), ("%3D%22", 1))),
        "\\n escapes": _fill(size, weighted(("\\n", 50), ("\\npassword", 1), ("\\u0022", 1))),
        "= runs": _fill(size, weighted(("=", 50), ("password", 1), ("token==", 1))),
        "one base64 line": _fill(size, lambda: b64),
        "PEM headers, no END": _fill(
            size, lambda: "-----BEGIN RSA PRIVATE KEY-----\n" + b64[:64] + "\n" + b64[64:128] + "\n"
        ),
    }


# What a fresh process pays for the redactor: the import, then a first redact_text (which
# compiles the patterns that text needs) of the example session state and of a line of
# secrets, each in CPU time (the machine's other load counts less than in wall-clock time).
STARTUP_PROBE = """
import sys, time
state, line = sys.argv[1], sys.argv[2]
t0 = time.process_time()
from clm_policy.memory.redact import redact_text
t1 = time.process_time()
redact_text(state)
t2 = time.process_time()
redact_text(line)
t3 = time.process_time()
print(t1 - t0, t2 - t1, t3 - t2)
"""
SECRETS_LINE = (
    "password=Xk9mP2vL7qR4nW8tZ3 curl -u 'a:p@ss$!w0rd9' -H 'X-Api-Key: 9c1f04be7d2a6e35' "
    "Authorization: Token 5eb4223e50084 ghp_x sk_test_x AKIA https://u:p4ss@x"
)


def startup(runs: int) -> dict[str, float]:
    """Medians over ``runs`` fresh processes, in ms: import, first redaction of
    docs/examples/session-state.json, then of :data:`SECRETS_LINE`."""
    root = Path(__file__).resolve().parents[1]
    state = (root / "docs" / "examples" / "session-state.json").read_text(encoding="utf-8")
    found: list[list[float]] = []
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, "-c", STARTUP_PROBE, state, SECRETS_LINE],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        found.append([float(x) * 1e3 for x in out.split()])
    keys = ("import_ms", "first_state_ms", "first_secrets_ms")
    return {key: statistics.median(row[i] for row in found) for i, key in enumerate(keys)}


def median_time(fn: Callable[[], object], runs: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


# --- the run --------------------------------------------------------------------------------


def _figures(scores: dict[str, Score]) -> dict[str, Any]:
    per_kind = {
        kind: {
            "secrets": s.secrets,
            "recall": s.recall,
            "non_secrets": s.non_secrets,
            "false_alarm_rate": s.false_alarm_rate,
            "misses": [m.context for m in s.misses],
            "false_alarms": [m.context for m in s.false_alarms],
        }
        for kind, s in scores.items()
    }
    groups = {}
    for group, kinds in (*GROUPS.items(), ("all", ALL_KINDS)):
        t = total(scores, kinds)
        groups[group] = {
            "secrets": t.secrets,
            "recall": t.recall,
            "non_secrets": t.non_secrets,
            "false_alarm_rate": t.false_alarm_rate,
        }
    return {"per_kind": per_kind, "groups": groups}


def scanner_figures() -> dict[str, Any]:
    """How redact_text does on the scanners' own rule tests (benchmarks/scanner_cases.py)."""
    misses, alarms, changed_aside = [], [], []
    secrets = sum(case.is_secret for case in CASES)
    for case in CASES:
        out = ours(case.text)
        if case.is_secret and any(secret in out for secret in case.secrets):
            misses.append(f"{case.source}/{case.rule}: {case.text[:80]!r}")
        elif not case.is_secret and out != case.text:
            alarms.append(f"{case.source}/{case.rule}: {case.text[:80]!r}")
    reasons: dict[str, list[int]] = {}
    for case in SET_ASIDE:
        changed = ours(case.text) != case.text
        counts = reasons.setdefault(case.set_aside, [0, 0])
        counts[0] += 1
        counts[1] += changed
        if changed:
            changed_aside.append(f"{case.source}/{case.rule}: {case.text[:60]!r}")
    non_secrets = len(CASES) - secrets
    return {
        "secrets": secrets,
        "recall": (secrets - len(misses)) / secrets,
        "non_secrets": non_secrets,
        "false_alarm_rate": len(alarms) / non_secrets,
        "misses": misses,
        "false_alarms": alarms,
        "set_aside": len(SET_ASIDE),
        "set_aside_changed": len(changed_aside),
        "set_aside_by_reason": {reason: tuple(n) for reason, n in reasons.items()},
    }


def _baseline(samples: Sequence[Sample], ordinary: str, kb: int) -> dict[str, Any]:
    # A RAM-backed folder where there is one: writing a file to disk can cost more than
    # scanning it, and only the scan is timed anyway.
    shm = "/dev/shm" if os.path.isdir("/dev/shm") else None
    with tempfile.TemporaryDirectory(dir=shm) as folder:
        try:
            ds = DetectSecrets(Path(folder))
        except ImportError:
            return {"available": False}
        with ds.session():
            found, corpus_s = [], 0.0
            for s in samples:
                path = ds.write(s.text, s.context)
                start = time.perf_counter()
                found.append(ds.scan(path))
                corpus_s += time.perf_counter() - start
            piece = ordinary[: kb * 1000]
            path = ds.write(piece, "prose")
            start = time.perf_counter()
            ds.scan(path)
            ordinary_s = time.perf_counter() - start
    return {
        "available": True,
        "version": ds.version,
        "values": _figures(_apply_values(samples, found)),
        "lines": _figures(_apply_lines(samples, found)),
        "corpus_s": corpus_s,
        "ordinary_kb": kb,
        "ordinary_s_per_mb": ordinary_s / (len(piece) / 1e6),
    }


def _apply_values(
    samples: Sequence[Sample], found: Sequence[list[tuple[int, str]]]
) -> dict[str, Score]:
    out = []
    for sample, findings in zip(samples, found, strict=True):
        text = sample.text
        for _, value in findings:
            if value:
                text = text.replace(value, "[REDACTED]")
        out.append((sample, text))
    return score(out)


def _apply_lines(
    samples: Sequence[Sample], found: Sequence[list[tuple[int, str]]]
) -> dict[str, Score]:
    out = []
    for sample, findings in zip(samples, found, strict=True):
        flagged = {line for line, _ in findings}
        lines = sample.text.splitlines(keepends=True)
        text = "".join("[REDACTED]\n" if i in flagged else s for i, s in enumerate(lines, 1))
        out.append((sample, text))
    return score(out)


def run(runs: int, size_mb: float, baseline_kb: int, baseline: bool) -> dict[str, Any]:
    samples = build()
    check_corpus(samples)
    corpus_bytes = sum(len(s.text.encode()) for s in samples)
    quality = _figures(evaluate(ours, samples))
    corpus_s = median_time(lambda: [ours(s.text) for s in samples], runs)
    size = int(size_mb * 1e6)
    inputs = speed_inputs(size)
    speed = {
        name: median_time(lambda t=text: ours(t), runs) / size_mb for name, text in inputs.items()
    }
    worst = max(speed.values())
    started = startup(max(5, runs * 3))
    groups = quality["groups"]
    scanners = scanner_figures()
    result: dict[str, Any] = {
        "benchmark": "redact",
        "python": platform.python_version(),
        "clm_policy": __version__,
        "runs": runs,
        "samples": len(samples),
        "corpus_bytes": corpus_bytes,
        "quality": quality,
        "scanners": scanners,
        "corpus_s": corpus_s,
        "size_mb": size_mb,
        "s_per_mb": speed,
        "worst_s_per_mb": worst,
        "startup": started,
        "targets": {
            **{f"recall_{group}": target for group, target in TARGET_RECALL.items()},
            "false_alarm_rate": TARGET_FALSE_ALARMS,
            "scanner_recall": TARGET_SCANNER_RECALL,
            "s_per_mb": TARGET_S_PER_MB,
        },
        "target_met": {
            **{
                f"recall_{group}": groups[group]["recall"] >= target
                for group, target in TARGET_RECALL.items()
            },
            **{
                f"false_alarms_{group}": groups[group]["false_alarm_rate"] <= TARGET_FALSE_ALARMS
                for group in GROUPS
            },
            "scanner_recall": scanners["recall"] >= TARGET_SCANNER_RECALL,
            "scanner_false_alarms": scanners["false_alarm_rate"] <= TARGET_FALSE_ALARMS,
            "s_per_mb": worst <= TARGET_S_PER_MB,
        },
        "detect_secrets": (
            _baseline(samples, inputs["ordinary prose and code"], baseline_kb)
            if baseline
            else {"available": False, "skipped": True}
        ),
    }
    return result


def _pct(x: float) -> str:
    return f"{x * 100:5.1f}%"


def _verdict(met: bool) -> str:
    return "met" if met else "MISSED"


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b else "n/a"


def report(r: dict[str, Any], misses: bool) -> str:
    q, ds = r["quality"], r["detect_secrets"]
    has_ds = ds.get("available", False)
    dq = ds["values"] if has_ds else None
    lines = [
        f"bench_redact: redact_text on a corpus of {r['samples']} samples "
        f"({r['corpus_bytes'] / 1e3:.0f} KB), {len(ALL_KINDS)} kinds",
        f"  python {r['python']}, clm-policy {r['clm_policy']}; "
        + (
            f"baseline detect-secrets {ds['version']} (default plugins and filters, scan_file "
            "per sample; redaction = removing the values it reports)"
            if has_ds
            else "detect-secrets: "
            + ("skipped (--no-baseline)" if ds.get("skipped") else "not installed, no baseline")
        ),
        "",
        f"  {'kind':30} {'group':7} {'secrets':>7} {'recall':>7} {'d-s':>7}   "
        f"{'non-secrets':>11} {'false alarms':>12} {'d-s':>7}",
    ]
    for kind in ALL_KINDS:
        k = q["per_kind"][kind]
        d = dq["per_kind"][kind] if dq else None
        group = next(g for g, kinds in GROUPS.items() if kind in kinds)
        lines.append(
            f"  {kind:30} {group:7} {k['secrets']:7d} {_pct(k['recall']):>7} "
            f"{_pct(d['recall']) if d else '-':>7}   {k['non_secrets']:11d} "
            f"{_pct(k['false_alarm_rate']):>12} {_pct(d['false_alarm_rate']) if d else '-':>7}"
        )
    below = [
        f"{kind} {_pct(q['per_kind'][kind]['recall']).strip()}"
        for group, kinds in GROUPS.items()
        for kind in kinds
        if q["per_kind"][kind]["recall"] < TARGET_RECALL[group]
    ]
    # The targets are on each group's samples together, so one kind can fail inside a group
    # that meets its target: name those kinds.
    lines += ["", f"  kinds below their group's recall target: {', '.join(below) or 'none'}"]
    met = r["target_met"]
    for group in (*GROUPS, "all"):
        g = q["groups"][group]
        target = TARGET_RECALL.get(group)
        recall_verdict = fa_verdict = ""
        if target:
            recall_verdict = f" (target >= {target:.0%}: {_verdict(met['recall_' + group])})"
            fa_verdict = (
                f" (target <= {TARGET_FALSE_ALARMS:.0%}: {_verdict(met['false_alarms_' + group])})"
            )
        lines.append(
            f"  {group + ' kinds:':15} recall {_pct(g['recall'])} of {g['secrets']}"
            f"{recall_verdict}; false alarms {_pct(g['false_alarm_rate'])} of "
            f"{g['non_secrets']}{fa_verdict}"
        )
        if has_ds:
            v, li = ds["values"]["groups"][group], ds["lines"]["groups"][group]
            lines.append(
                f"  {'':15} detect-secrets: recall {_pct(v['recall'])} (lines: "
                f"{_pct(li['recall'])}), false alarms {_pct(v['false_alarm_rate'])} (lines: "
                f"{_pct(li['false_alarm_rate'])}); recall ratio ours/d-s "
                f"{_ratio(g['recall'], v['recall'])}"
            )
    sc = r["scanners"]
    lines += [
        "",
        "  the scanners' own rule tests (gitleaks, detect-secrets; benchmarks/scanner_cases.py)",
        f"  {'':15} recall {_pct(sc['recall'])} of {sc['secrets']} (target >= "
        f"{TARGET_SCANNER_RECALL:.0%}: {_verdict(met['scanner_recall'])}); false alarms "
        f"{_pct(sc['false_alarm_rate'])} of {sc['non_secrets']} (target <= "
        f"{TARGET_FALSE_ALARMS:.0%}: {_verdict(met['scanner_false_alarms'])})",
        f"  {'':15} set aside {sc['set_aside']}, changed {sc['set_aside_changed']}:",
    ]
    for reason, (n, changed) in sorted(sc["set_aside_by_reason"].items()):
        lines.append(f"    {changed:3d} of {n:3d}  {reason}")
    lines += ["", f"  speed (median of {r['runs']} runs after a warm-up)"]
    corpus = f"  corpus, all samples: redact_text {r['corpus_s'] * 1e3:.1f} ms"
    if has_ds:
        corpus += (
            f"; detect-secrets {ds['corpus_s'] * 1e3:.0f} ms (one run, scan_file only): "
            f"{_ratio(ds['corpus_s'], r['corpus_s'])} ours"
        )
    lines.append(corpus)
    lines.append(f"  {r['size_mb']:g} MB inputs{'':20} {'s per MB':>9} {'MB/s':>8}")
    for name, s_per_mb in r["s_per_mb"].items():
        lines.append(f"    {name:31} {s_per_mb:9.3f} {1 / s_per_mb:8.1f}")
    lines.append(
        f"  worst case {r['worst_s_per_mb']:.3f} s per MB; target <= {TARGET_S_PER_MB:g}: "
        f"{_verdict(met['s_per_mb'])}"
    )
    st = r["startup"]
    lines.append(
        f"  a fresh process (CPU time, median): import {st['import_ms']:.1f} ms; first "
        f"redact_text of the example state {st['first_state_ms']:.1f} ms, then of a line of "
        f"secrets {st['first_secrets_ms']:.1f} ms (patterns compile on first use)"
    )
    if has_ds:
        ordinary = r["s_per_mb"]["ordinary prose and code"]
        lines.append(
            f"  detect-secrets on {ds['ordinary_kb']} KB of the ordinary input: "
            f"{ds['ordinary_s_per_mb']:.2f} s per MB, {_ratio(ds['ordinary_s_per_mb'], ordinary)} "
            "redact_text's"
        )
    if misses:
        lines += ["", "  the scanners' cases redact_text misses or changes"]
        lines += [f"    missed {m}" for m in sc["misses"]]
        lines += [f"    changed {m}" for m in sc["false_alarms"]]
        lines += ["", "  misses and false alarms of redact_text (kind: contexts)"]
        for kind in ALL_KINDS:
            k = q["per_kind"][kind]
            if k["misses"]:
                lines.append(f"    missed {kind}: {', '.join(k['misses'])}")
            if k["false_alarms"]:
                lines.append(f"    changed {kind}: {', '.join(k['false_alarms'])}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--runs", type=int, default=DEFAULT_RUNS, help="timed runs")
    parser.add_argument("--size-mb", type=float, default=1.0, help="size of each speed input")
    parser.add_argument(
        "--baseline-kb", type=int, default=100, help="ordinary text detect-secrets is timed on"
    )
    parser.add_argument("--no-baseline", action="store_true", help="skip detect-secrets")
    parser.add_argument("--misses", action="store_true", help="list each miss and false alarm")
    args = parser.parse_args(argv)
    if args.runs < 1 or args.size_mb <= 0 or args.baseline_kb < 1:
        parser.error("--runs, --size-mb and --baseline-kb must be positive")
    try:
        result = run(args.runs, args.size_mb, args.baseline_kb, not args.no_baseline)
    except BenchError as exc:
        print(f"bench_redact: sanity check failed: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(result, indent=2) if args.json else report(result, args.misses))
    return 0


if __name__ == "__main__":
    sys.exit(main())
