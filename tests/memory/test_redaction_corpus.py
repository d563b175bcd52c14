"""benchmarks/redaction_corpus.py: the corpus is sound, and the redactor meets its targets on it.

Soundness: every kind has at least 10 contexts and non-secret samples, every secret occurs in
its text, every fake token has its provider's format, the claimed kinds are rule ids of the
redactor. Targets (the ones benchmarks/bench_redact.py prints): recall >= 99% on the kinds
docs/redaction.md claimed before, on the shapes and on the tools' password places (issue 26),
>= 90% on the kinds being added, false alarms <= 10% in each group. A failure lists every miss as kind/context; ``python benchmarks/bench_redact.py
--misses`` shows the same with the figures.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from types import ModuleType
from typing import Any

import pytest

from clm_policy.memory.redact import RULES, redact_text

from conftest import REPO


def _load_corpus() -> ModuleType:
    # benchmarks/ is not a package: load the module from its file, as the benchmark imports it.
    path = REPO / "benchmarks" / "redaction_corpus.py"
    spec = importlib.util.spec_from_file_location("redaction_corpus", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while being built
    spec.loader.exec_module(module)
    return module


corpus = _load_corpus()
SAMPLES = corpus.build()
KINDS = corpus.ALL_KINDS
GROUPS = corpus.GROUPS
MIN_RECALL = {"claimed": 0.99, "added": 0.90, "shapes": 0.99, "tools": 0.99}
MAX_FALSE_ALARMS = 0.10

# Each provider's token format, as public scanner rule sets describe it (gitleaks, trufflehog,
# detect-secrets): the fakes must have it, or the corpus measures something else.
FORMATS = {
    "aws-access-key-id": r"(?:AKIA|ASIA)[A-Z2-7]{16}",
    "github-pat": r"ghp_[A-Za-z0-9]{36}",
    "github-oauth": r"gho_[A-Za-z0-9]{36}",
    "github-app-token": r"gh[us]_[A-Za-z0-9]{36}",
    "github-refresh-token": r"ghr_[A-Za-z0-9]{36,76}",
    "github-fine-grained-pat": r"github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}",
    "anthropic-api-key": r"sk-ant-api03-[A-Za-z0-9_-]{93}AA",
    "anthropic-admin-key": r"sk-ant-admin01-[A-Za-z0-9_-]{93}AA",
    "openai-api-key": r"sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_-]{48,}|[A-Za-z0-9]{48})",
    "slack-token": r"(?:xox[bpae]-[0-9]{10,13}-[0-9]{10,13}-[A-Za-z0-9]{24}|xapp-1-A[A-Z0-9]{10}-[0-9]{13}-[0-9a-f]{64})",
    "slack-webhook-url": r"https://hooks\.slack\.com/services/T[A-Z0-9]{8,10}/B[A-Z0-9]{10}/[A-Za-z0-9]{24}",
    "gcp-api-key": r"AIza[A-Za-z0-9_-]{35}",
    "jwt": r"eyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}",
    "npm-token": r"npm_[A-Za-z0-9]{36}",
    "pypi-token": r"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}",
    "stripe-secret-key": r"sk_(?:live|test)_[A-Za-z0-9]{24,99}",
    "stripe-restricted-key": r"rk_(?:live|test)_[A-Za-z0-9]{24,99}",
    "huggingface-token": r"hf_[A-Za-z]{34}",
    "huggingface-org-token": r"api_org_[A-Za-z]{34}",
    "gitlab-pat": r"glpat-[A-Za-z0-9_-]{20}",
    "gitlab-pipeline-trigger-token": r"glptt-[0-9a-f]{40}",
    "gitlab-runner-token": r"GR1348941[A-Za-z0-9_-]{20}",
    "gitlab-deploy-token": r"gldt-[A-Za-z0-9_-]{20}",
    "azure-ad-client-secret": r"[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34}",
    "dockerhub-pat": r"dckr_pat_[A-Za-z0-9_-]{27}",
    "digitalocean-token": r"do[por]_v1_[0-9a-f]{64}",
    "twilio-api-key": r"SK[0-9a-f]{32}",
    "sendgrid-api-key": r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}",
    "shopify-token": r"shp(?:at|ca|pa|ss)_[0-9a-f]{32}",
    "atlassian-api-token": r"ATATT3[A-Za-z0-9_=-]{186}",
    "databricks-token": r"dapi[0-9a-f]{32}",
    "heroku-api-key": r"HRKU-AA[A-Za-z0-9_-]{58}",
    "slack-webhook-url/no-scheme": r"hooks\.slack\.com/services/T[A-Z0-9]{8,10}/B[A-Z0-9]{10}/[A-Za-z0-9]{24}",
    # the same formats, their bodies in hex or lower case only (the prefix names the kind)
    "token/narrow-body": r"(?:gh[pos]_[0-9a-z]{36}|ghr_[0-9a-z]{36,76}|npm_[0-9a-z]{36}|AIza[0-9a-z]{35}|glpat-[0-9a-z]{20}|dckr_pat_[0-9a-z]{27}|HRKU-AA[0-9a-z]{58}|ATATT3xFfGF0[0-9a-z]{100,180}|github_pat_[0-9a-z]{22}_[0-9a-z]{59})",
    "pypi-token/narrow-body": r"pypi-(?:AgEIcHlwaS5vcmc|AgENdGVzdC5weXBpLm9yZw)[0-9a-z]{50,160}",
    "stripe-key/narrow-body": r"[sr]k_(?:live|test|prod)_[0-9a-z]{10,99}",
}


@pytest.fixture(scope="module")
def scores() -> dict[str, Any]:
    return corpus.evaluate(lambda text: redact_text(text).text, SAMPLES)


def _listed(samples: tuple[Any, ...]) -> str:
    return ", ".join(f"{s.kind}/{s.context}" for s in samples)


@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_has_ten_contexts_and_non_secrets(kind: str) -> None:
    contexts = {s.context for s in SAMPLES if s.kind == kind and s.is_secret}
    assert len(contexts) >= 10, sorted(contexts)
    assert any(s.kind == kind and not s.is_secret for s in SAMPLES)


def test_every_sample_is_of_a_listed_kind() -> None:
    assert {s.kind for s in SAMPLES} == set(KINDS)
    assert len(KINDS) == len(set(KINDS)) == sum(map(len, GROUPS.values()))


def test_claimed_kinds_are_rules_of_the_redactor() -> None:
    assert set(corpus.CLAIMED_KINDS) <= {rule.id for rule in RULES}


def test_every_secret_occurs_in_its_text() -> None:
    absent = [s for s in SAMPLES if not all(secret in s.text for secret in s.secrets)]
    assert not absent, _listed(tuple(absent))


def test_secrets_are_long_enough_to_be_told_apart() -> None:
    # A short secret could occur in the rest of the text, or in a marker, by chance.
    short = [s for s in SAMPLES if any(len(secret) < 16 for secret in s.secrets)]
    assert not short, _listed(tuple(short))


@pytest.mark.parametrize("kind", sorted(FORMATS))
def test_fake_tokens_have_their_provider_format(kind: str) -> None:
    pattern = re.compile(FORMATS[kind])
    for sample in SAMPLES:
        if sample.kind == kind and sample.is_secret:
            (token,) = sample.secrets
            assert pattern.fullmatch(token), f"{sample.context}: {token}"


def test_a_private_key_sample_holds_every_line_of_its_body() -> None:
    for sample in SAMPLES:
        if sample.kind == "private-key" and sample.is_secret and sample.context != "truncated":
            assert len(sample.secrets) >= 5
            assert all(re.fullmatch(r"[A-Za-z0-9+/=]{16,}", line) for line in sample.secrets)


def test_the_corpus_is_the_same_every_time() -> None:
    corpus.build.cache_clear()
    assert corpus.build() == SAMPLES


def test_scoring_counts_a_surviving_secret_and_a_changed_non_secret() -> None:
    secret = corpus.Sample("github-pat", "prose", "token ghp_x here", ("ghp_x",))
    plain = corpus.Sample("github-pat", "prose", "nothing here")
    caught, missed = corpus.judge(secret, "token [REDACTED] here"), corpus.judge(secret, "ghp_x")
    assert (caught.caught, missed.caught, missed.misses) == (1, 0, (secret,))
    assert corpus.judge(plain, "nothing here").alarms == 0
    assert corpus.judge(plain, "nothing [REDACTED]").false_alarms == (plain,)


@pytest.mark.parametrize("group", list(GROUPS))
def test_recall(group: str, scores: dict[str, Any]) -> None:
    result = corpus.total(scores, GROUPS[group])
    assert result.recall >= MIN_RECALL[group], (
        f"recall {result.recall:.1%} of {result.secrets} on {group} kinds; missed: "
        + _listed(result.misses)
    )


@pytest.mark.parametrize("kind", KINDS)
def test_recall_of_each_kind(kind: str, scores: dict[str, Any]) -> None:
    # the group's target holds for each kind too: a whole kind cannot hide in its group
    group = next(group for group, kinds in GROUPS.items() if kind in kinds)
    result = corpus.total(scores, [kind])
    assert result.recall >= MIN_RECALL[group], (
        f"recall {result.recall:.1%} of {result.secrets} on {kind}; missed: "
        + _listed(result.misses)
    )


@pytest.mark.parametrize("group", list(GROUPS))
def test_false_alarms(group: str, scores: dict[str, Any]) -> None:
    result = corpus.total(scores, GROUPS[group])
    assert result.false_alarm_rate <= MAX_FALSE_ALARMS, (
        f"false alarms {result.false_alarm_rate:.1%} of {result.non_secrets} on {group} kinds; "
        "changed: " + _listed(result.false_alarms)
    )


# -- the scanners' own rule tests (benchmarks/scanner_cases.py): data, not generated


def _load(name: str) -> ModuleType:
    path = REPO / "benchmarks" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


scanner = _load("scanner_cases")
MIN_SCANNER_RECALL = 0.99


def test_the_scanners_cases_are_sound() -> None:
    for case in (*scanner.CASES, *scanner.SET_ASIDE):
        assert case.source in ("gitleaks", "detect-secrets"), case
        assert all(secret in case.text for secret in case.secrets), case
    assert all(case.set_aside for case in scanner.SET_ASIDE)
    assert not any(case.set_aside for case in scanner.CASES)
    positives = [case for case in scanner.CASES if case.is_secret]
    assert len(positives) >= 150
    assert len(scanner.CASES) - len(positives) >= 200


def test_the_scanners_positives_are_redacted() -> None:
    positives = [case for case in scanner.CASES if case.is_secret]
    missed = [
        case
        for case in positives
        if any(secret in redact_text(case.text).text for secret in case.secrets)
    ]
    recall = 1 - len(missed) / len(positives)
    assert recall >= MIN_SCANNER_RECALL, [f"{c.source}/{c.rule}: {c.text[:60]!r}" for c in missed]


def test_the_scanners_negatives_are_left_alone() -> None:
    negatives = [case for case in scanner.CASES if not case.is_secret]
    changed = [case for case in negatives if redact_text(case.text).text != case.text]
    assert len(changed) / len(negatives) <= MAX_FALSE_ALARMS, [
        f"{c.source}/{c.rule}: {c.text[:60]!r}" for c in changed
    ]
