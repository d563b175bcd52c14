"""clm_policy.memory.redact token rules (tokens.py, token_checks.py): each provider's token
bare and in many contexts, exact output, idempotence; placeholders, low-entropy look-alikes
and glued tokens left alone; the checks themselves; long adversarial inputs.

Every fake token is generated here from a seeded random.Random; none is a real key.
"""

from __future__ import annotations

import random
import string

import pytest

from clm_policy.memory.redact import RULES, Redaction, redact_text
from clm_policy.memory.redact.token_checks import is_random, placeholder_shape
from clm_policy.memory.redact.tokens import TOKEN_RULES

DIGITS = string.digits
HEX = string.digits + "abcdef"
UPPER_HEX = string.digits + "ABCDEF"
LOWER_ALNUM = string.ascii_lowercase + string.digits
LOWER = string.ascii_lowercase
UPPER_ALNUM = string.ascii_uppercase + string.digits
LETTERS = string.ascii_letters
ALNUM = string.ascii_letters + string.digits
URLSAFE = ALNUM + "_-"
AZURE = ALNUM + "_~.-"


def fake(alphabet: str, n: int, seed: int | str) -> str:
    """``n`` random-looking characters, the same on every run."""
    rng = random.Random(seed)
    return "".join(rng.choice(alphabet) for _ in range(n))


def azure(digit: str, tail: int, seed: int) -> str:
    # letters and digits at both ends, so that the fake stands alone in every context below
    return (
        fake(ALNUM, 1, seed)
        + fake(AZURE, 2, seed + 1)
        + f"{digit}Q~"
        + fake(AZURE, tail - 1, seed + 2)
        + fake(ALNUM, 1, seed + 3)
    )


# rule id -> fake tokens it must replace whole (the first one is used where one is enough).
NEW_TOKENS: dict[str, list[str]] = {
    "npm-token": ["npm_" + fake(ALNUM, 36, 1000)],
    "pypi-token": [
        "pypi-AgEIcHlwaS5vcmc" + fake(URLSAFE, 160, 1010),
        "pypi-AgENdGVzdC5weXBpLm9yZw" + fake(URLSAFE, 140, 1011),  # test.pypi.org
    ],
    "stripe-secret-key": [
        "sk_live_" + fake(ALNUM, 99, 1020),
        "sk_test_" + fake(ALNUM, 24, 1021),
    ],
    "stripe-restricted-key": [
        "rk_live_" + fake(ALNUM, 99, 1030),
        "rk_test_" + fake(ALNUM, 24, 1031),
    ],
    "huggingface-token": ["hf_" + fake(LETTERS, 34, 1040)],
    "huggingface-org-token": ["api_org_" + fake(LETTERS, 34, 1050)],
    "gitlab-pat": [
        "glpat-" + fake(URLSAFE, 20, 1060),
        "glpat-" + fake(URLSAFE, 37, 1061) + ".01." + fake(LOWER_ALNUM, 7, 1062),  # routable
    ],
    "gitlab-pipeline-trigger-token": ["glptt-" + fake(HEX, 40, 1070)],
    "gitlab-runner-token": [
        "GR1348941" + fake(URLSAFE, 20, 1080),  # registration
        "glrt-" + fake(URLSAFE, 20, 1081),  # authentication
    ],
    "gitlab-deploy-token": ["gldt-" + fake(URLSAFE, 20, 1090)],
    "azure-ad-client-secret": [azure("8", 34, 1100), azure("7", 31, 1104)],
    "dockerhub-pat": [
        "dckr_pat_" + fake(URLSAFE, 27, 1110),
        "dckr_oat_" + fake(URLSAFE, 32, 1111),
    ],
    "digitalocean-token": [f"do{k}_v1_" + fake(HEX, 64, 1120 + i) for i, k in enumerate("por")],
    "twilio-api-key": ["SK" + fake(HEX, 32, 1130)],
    "sendgrid-api-key": ["SG." + fake(URLSAFE, 22, 1140) + "." + fake(URLSAFE, 43, 1141)],
    "shopify-token": [
        f"shp{k}_" + fake(HEX, 32, 1150 + i) for i, k in enumerate(["at", "ca", "pa", "ss"])
    ],
    "atlassian-api-token": ["ATATT3" + fake(URLSAFE, 177, 1160) + "=" + fake(UPPER_HEX, 8, 1161)],
    "databricks-token": ["dapi" + fake(HEX, 32, 1170), "dapi" + fake(HEX, 32, 1171) + "-2"],
    "heroku-api-key": ["HRKU-AA" + fake(URLSAFE, 58, 1180)],
    "slack-webhook-url": [  # without a scheme
        "hooks.slack.com/services/"
        f"T{fake(UPPER_ALNUM, 8, 1190)}/B{fake(UPPER_ALNUM, 10, 1191)}/{fake(ALNUM, 24, 1192)}"
    ],
}

# Where an agent meets a token: prose, a shell export, JSON, YAML, after a JSON escape, after a
# URL-encoded space or "=", in a URL query, quoted, in code, in Markdown.
CONTEXTS = [
    "{s}",
    "the key is {s}, rotate it.",
    "export SOME_VALUE={s}\n",
    '{{"value": "{s}", "n": 1}}',
    "settings:\n  value: {s}\n",
    '"output": "line1\\n{s}\\nline3"',
    '"output": "a\\t{s}\\u0022"',
    "q=a%20{s}%20b",
    "state=x%3D{s}%26y",
    "GET /v1/items?value={s}&page=2",
    "value = '{s}'",
    'client = Client(key="{s}")\n',
    "> see `{s}` (old)",
    "<value>{s}</value>",
]


def _cases() -> list[tuple[str, str]]:
    return [(rule, secret) for rule, secrets in NEW_TOKENS.items() for secret in secrets]


def _short(value: object) -> str:
    return repr(value)[:32]


@pytest.mark.parametrize(("rule", "secret"), _cases(), ids=lambda v: str(v)[:20])
@pytest.mark.parametrize("context", CONTEXTS, ids=_short)
def test_a_token_is_replaced_whole_in_every_context(rule: str, secret: str, context: str) -> None:
    result = redact_text(context.format(s=secret))
    assert result.text == context.format(s=f"[REDACTED:{rule}]")
    assert result.counts == {rule: 1}


# Token rules whose fakes and contexts are in tests/memory/test_redact.py.
TESTED_THERE = {
    "private-key", "aws-access-key-id", "github-pat", "github-oauth", "github-app-token",
    "github-refresh-token", "github-fine-grained-pat", "anthropic-admin-key",
    "anthropic-api-key", "openai-api-key", "slack-token", "gcp-api-key", "jwt",
}  # fmt: skip


def test_every_token_rule_is_exercised() -> None:
    assert {r.id for r in TOKEN_RULES} == TESTED_THERE | set(NEW_TOKENS)
    assert set(NEW_TOKENS) <= {r.id for r in RULES}


def test_redacting_twice_changes_nothing() -> None:
    for _, secret in _cases():
        for context in CONTEXTS:
            once = redact_text(context.format(s=secret)).text
            assert redact_text(once) == Redaction(once, {}), (secret, context)


def test_a_slack_webhook_keeps_working_with_its_scheme() -> None:
    hook = NEW_TOKENS["slack-webhook-url"][0]
    marker = "[REDACTED:slack-webhook-url]"
    assert redact_text(f"https://{hook}").text == marker
    assert redact_text(f"http://{hook}").text == marker
    assert redact_text(f"curl -X POST https://{hook} -d @m.json").text == (
        f"curl -X POST {marker} -d @m.json"
    )
    # another scheme, or none: the URL from its host on
    assert redact_text(f"ftp://{hook}").text == "ftp://[REDACTED:slack-webhook-url]"
    assert redact_text(f"//{hook}").text == "//[REDACTED:slack-webhook-url]"


def test_an_instance_prefix_before_a_gitlab_token_stays() -> None:
    pat = NEW_TOKENS["gitlab-pat"][0]
    assert redact_text(f"token: SIE-{pat}").text == "token: SIE-[REDACTED:gitlab-pat]"


def test_an_encoded_atlassian_checksum_goes_with_its_token() -> None:
    token = NEW_TOKENS["atlassian-api-token"][0]
    encoded = token.replace("=", "%3D")
    assert redact_text(f"t={encoded}&x=1").text == "t=[REDACTED:atlassian-api-token]&x=1"


def test_a_sentence_may_end_right_after_an_azure_secret() -> None:
    secret = NEW_TOKENS["azure-ad-client-secret"][0]
    assert redact_text(f"It is {secret}. Rotate it.").text == (
        "It is [REDACTED:azure-ad-client-secret]. Rotate it."
    )


UUID = "9b2f6c1e-4d7a-4e3b-9c8d-2a1f0e5b7c6d"
# The legacy Heroku API key is a UUID: redacted only after a key naming Heroku; the key stays.
# fmt: off
HEROKU_UUID: list[tuple[str, str]] = [
    (f"HEROKU_API_KEY={UUID}", "HEROKU_API_KEY=[REDACTED:heroku-api-key]"),
    (f"export HEROKU_KEY='{UUID}'", "export HEROKU_KEY='[REDACTED:heroku-api-key]'"),
    (f'{{"heroku_token": "{UUID}"}}', '{"heroku_token": "[REDACTED:heroku-api-key]"}'),
    (f"config.herokuKey = \"{UUID.upper()}\"", "config.herokuKey = \"[REDACTED:heroku-api-key]\""),
    (f"myHerokuToken: {UUID}", "myHerokuToken: [REDACTED:heroku-api-key]"),
    (f'"env": "x\\nHEROKU_KEY={UUID}"', '"env": "x\\nHEROKU_KEY=[REDACTED:heroku-api-key]"'),
    (f"q=a%0AHEROKU_KEY%3D{UUID}%26", "q=a%0AHEROKU_KEY%3D[REDACTED:heroku-api-key]%26"),
]
# fmt: on


@pytest.mark.parametrize(("text", "expected"), HEROKU_UUID, ids=_short)
def test_a_legacy_heroku_key_after_a_heroku_key_name(text: str, expected: str) -> None:
    result = redact_text(text)
    assert result.text == expected
    assert result.counts == {"heroku-api-key": 1}


# Placeholders from documentation, masked tokens and low-entropy look-alikes: left alone.
PLACEHOLDERS = [
    # run of one character, or x-masks
    "ghp_" + "x" * 36,
    "AKIAXXXXXXXXXXXXXXXX",
    "AIza" + "a" * 35,
    "npm_" + "x" * 36,
    "npm_" + "0" * 36,
    "sk_live_" + "x" * 24,
    "rk_test_" + "0" * 30,
    "hf_" + "x" * 34,
    "api_org_" + "X" * 34,
    "glpat-xxxxxxxxxxxxxxxxxxxx",
    "glpat-XXXXXXXXXXX-XXXXXXXX",
    "glptt-" + "0" * 40,
    "GR1348941xxxxxxxxxxxxxxxxxxxx",
    "gldt-" + "a" * 20,
    "dckr_pat_" + "x" * 27,
    "dop_v1_" + "0" * 64,
    "SK" + "0" * 32,
    "SG." + "x" * 22 + "." + "x" * 43,
    "shpat_" + "f" * 32,
    "ATATT3" + "x" * 180,
    "dapi" + "0" * 32,
    "HRKU-AA" + "x" * 58,
    "pypi-AgEIcHlwaS5vcmc" + "A" * 80,
    "abc8Q~" + "x" * 34,
    "sk_live_4eC3" + "x" * 16 + "T1zdp7dc",
    "ghp_1a2B" + "x" * 28 + "9z8Y",
    # "EXAMPLE": AWS's documented example key id, and the like
    "AKIAIOSFODNN7EXAMPLE",
    "npm_EXAMPLE" + fake(ALNUM, 29, 2000),
    "sk_test_example" + fake(ALNUM, 20, 2001),
    # a short pattern repeated
    "npm_" + "abc123" * 6,
    "hf_" + "abcd" * 8 + "ab",
    "dop_v1_" + "0123456789abcdef" * 4,
    "SK" + "deadbeef" * 4,
    "shpss_" + "0123456789abcdef" * 2,
    "dapi" + "cafebabe" * 4,
    # counting up or down
    "npm_abcdefghijklmnopqrstuvwxyz0123456789",
    "sk_test_1234567890123456789012345678",
    "AKIA1234567890ABCDEF",
    "glpat-abcdefghijklmnopqrst",
    "AKIAZYXWVUTSRQPONMLK",
    # words joined by - or _
    "glpat-your-gitlab-token-here",
    "dckr_pat_your-docker-hub-token-here",
    "GR1348941_YOUR_REGISTRATION_TOKEN",
    # Slack: the secret part (the last) all one letter, digits only, or a mask
    "xoxb-123456789012-1234567890123-aaaaaaaaaaaaaaaaaaaaaaaa",
    "xoxb-123456789012-1234567890123",
    "xoxp-1111111111-2222222222-3333333333-" + "x" * 32,
    "hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
    "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
    # low entropy for its format (runs shorter than 8, no pattern: entropy decides), or a
    # body that stutters (half its steps repeat the character before)
    "AKIAAAAABBBBCCCCDDDD",
    "npm_" + "aaaaabbbbbcccccdddddeeeeefffffgggggh",
    # a short Stripe body: spelt with default words, counting up, a pattern repeated, a prefix
    # pasted twice
    "sk_test_yoursecretkeyhere",
    "sk_live_1234567890",
    "rk_test_" + "abc123" * 5,
    "pypi-AgEIcHlwaS5vcmc" + "pypi-AgEIcHlwaS5vcmc" * 4,
    "twilio SK" + "0000000ff0000000ff0000000ff00000",
    # a JWT-shaped placeholder
    "eyJxxxxxxxxxxxx.eyJxxxxxxxxxxxx.xxxxxxxxxxxxxxxx",
    # a legacy Heroku key that is a placeholder (the key name has no generic keyword)
    "HEROKU_KEY=00000000-0000-0000-0000-000000000000",
    "HEROKU_KEY=12345678-ABCD-ABCD-ABCD-1234567890AB",
]


@pytest.mark.parametrize("text", PLACEHOLDERS, ids=_short)
def test_placeholders_and_low_entropy_look_alikes_are_left_alone(text: str) -> None:
    assert redact_text(text) == Redaction(text, {})


LOOK_ALIKES = [
    # prefixes inside other words
    "the task_test_" + fake(ALNUM, 30, 2100) + " fixture",
    "disk_live_" + fake(ALNUM, 30, 2101),
    "thf_" + fake(LETTERS, 34, 2102),
    "a UUID alone: " + UUID,
    "session 9b2f6c1e-4d7a-4e3b-9c8d-2a1f0e5b7c6d on heroku",
    # too long or too short for the fixed-length formats
    "npm_" + fake(ALNUM, 37, 2103),
    "npm_" + fake(ALNUM, 35, 2104),
    "hf_" + fake(LETTERS, 35, 2105),
    "SK" + fake(HEX, 33, 2106),
    "dapi" + fake(HEX, 31, 2107),
    "dop_v1_" + fake(HEX, 63, 2108),
    "shpat_" + fake(HEX, 31, 2109),
    "sk_live_" + fake(ALNUM, 9, 2110),
    # "~" and "Q~" inside longer runs: URLs, signatures, Markdown
    "https://cdn.example.com/img/3f9a2c47e1b8d05f6a7c9e2b4d8f1a3c~tplv-k3u1fbpf-watermark.image",
    "Signature=" + fake(AZURE, 60, 2111) + "7Q~" + fake(AZURE, 34, 2112),
    fake(AZURE, 2, 2113) + "1Q~" + fake(AZURE, 34, 2114),  # only 2 characters before the digit
    "~" * 40,
    "~~~ strike ~~~ 1Q~ ~~~",
    "SG.module.function_name_of_length",
    "see hooks.slack.com/services for how webhooks work",
    "hooks.slack.com/services/" + fake(ALNUM, 10, 2115),
]


@pytest.mark.parametrize("text", LOOK_ALIKES, ids=_short)
def test_look_alikes_are_left_alone(text: str) -> None:
    assert redact_text(text) == Redaction(text, {})


def _fixed_length(rule: str) -> bool:
    return rule in {
        "npm-token", "huggingface-token", "huggingface-org-token", "digitalocean-token",
        "twilio-api-key", "shopify-token", "databricks-token", "azure-ad-client-secret",
    }  # fmt: skip


@pytest.mark.parametrize("rule", sorted(NEW_TOKENS))
@pytest.mark.parametrize("before", ["x", "line1", "%2", "n", "u0022", "%%2", "9"])
def test_a_token_glued_to_a_word_is_left_alone(rule: str, before: str) -> None:
    text = f"{before}{NEW_TOKENS[rule][0]}"
    assert redact_text(text) == Redaction(text, {})


@pytest.mark.parametrize("rule", sorted(r for r in NEW_TOKENS if _fixed_length(r)))
def test_a_fixed_length_token_with_a_character_too_many_is_left_alone(rule: str) -> None:
    text = NEW_TOKENS[rule][0] + "7"
    assert redact_text(text) == Redaction(text, {})


# rule id -> a generator of its random part: real tokens of any seed must be redacted.
FORMATS = {
    "npm-token": lambda s: "npm_" + fake(ALNUM, 36, s),
    "pypi-token": lambda s: "pypi-AgEIcHlwaS5vcmc" + fake(URLSAFE, 50, s),
    "stripe-secret-key": lambda s: "sk_live_" + fake(ALNUM, 24, s),
    "stripe-restricted-key": lambda s: "rk_test_" + fake(ALNUM, 24, s),
    "huggingface-token": lambda s: "hf_" + fake(LETTERS, 34, s),
    "huggingface-org-token": lambda s: "api_org_" + fake(LETTERS, 34, s),
    "gitlab-pat": lambda s: "glpat-" + fake(URLSAFE, 20, s),
    "gitlab-pipeline-trigger-token": lambda s: "glptt-" + fake(HEX, 40, s),
    "gitlab-runner-token": lambda s: "GR1348941" + fake(URLSAFE, 20, s),
    "gitlab-deploy-token": lambda s: "gldt-" + fake(URLSAFE, 20, s),
    "azure-ad-client-secret": lambda s: azure("7", 31, s),
    "dockerhub-pat": lambda s: "dckr_pat_" + fake(URLSAFE, 27, s),
    "digitalocean-token": lambda s: "dop_v1_" + fake(HEX, 64, s),
    "twilio-api-key": lambda s: "SK" + fake(HEX, 32, s),
    "sendgrid-api-key": lambda s: "SG." + fake(URLSAFE, 22, s) + "." + fake(URLSAFE, 39, s + 1),
    "shopify-token": lambda s: "shpat_" + fake(HEX, 32, s),
    "atlassian-api-token": lambda s: "ATATT3" + fake(URLSAFE, 100, s),
    "databricks-token": lambda s: "dapi" + fake(HEX, 32, s),
    "heroku-api-key": lambda s: "HRKU-" + fake(URLSAFE, 60, s),
    "aws-access-key-id": lambda s: "AKIA" + fake(UPPER_ALNUM, 16, s),
    "github-pat": lambda s: "ghp_" + fake(ALNUM, 36, s),
    "gcp-api-key": lambda s: "AIza" + fake(URLSAFE, 35, s),
    "slack-token": lambda s: (
        f"xoxb-{fake(DIGITS, 12, s)}-{fake(DIGITS, 13, s)}-{fake(ALNUM, 24, s)}"
    ),
}


@pytest.mark.parametrize("rule", sorted(FORMATS))
def test_random_tokens_of_the_shortest_length_are_all_redacted(rule: str) -> None:
    # 500 per format here; docs/redaction.md gives the thresholds' margins over a million.
    for seed in range(500):
        token = FORMATS[rule](seed)
        assert redact_text(f" {token} ").text == f" [REDACTED:{rule}] ", token


# rule id -> (prefix, shortest body): formats whose prefix alone names the kind. A body in hex
# or in lower case only is that token still (scanners' tests and some issuers write them so).
NARROW = {
    "github-pat": ("ghp_", 36),
    "github-oauth": ("gho_", 36),
    "github-app-token": ("ghs_", 36),
    "github-refresh-token": ("ghr_", 36),
    "anthropic-api-key": ("sk-ant-api03-", 20),
    "gcp-api-key": ("AIza", 35),
    "npm-token": ("npm_", 36),
    "pypi-token": ("pypi-AgEIcHlwaS5vcmc", 50),
    "stripe-secret-key": ("sk_prod_", 10),
    "stripe-restricted-key": ("rk_live_", 10),
    "huggingface-token": ("hf_", 34),
    "gitlab-pat": ("glpat-", 20),
    "dockerhub-pat": ("dckr_pat_", 27),
    "sendgrid-api-key": ("SG.abcdefghijklmnopqrstuv.", 39),
    "atlassian-api-token": ("ATATT3", 100),
    "heroku-api-key": ("HRKU-", 60),
}


@pytest.mark.parametrize("alphabet", [HEX, LOWER + DIGITS], ids=["hex", "lower-case"])
@pytest.mark.parametrize("rule", sorted(NARROW))
def test_a_prefixed_token_with_a_narrow_body_is_redacted(rule: str, alphabet: str) -> None:
    prefix, length = NARROW[rule]
    for seed in range(500):
        token = prefix + fake(alphabet, length, seed)
        assert redact_text(f" {token} ").text == f" [REDACTED:{rule}] ", token
    pat = f"github_pat_{fake(alphabet, 22, 1)}_{fake(alphabet, 59, 2)}"
    assert redact_text(pat).counts == {"github-fine-grained-pat": 1}


@pytest.mark.parametrize(
    ("text", "counts"),
    [
        ("sk_test_" + fake(LOWER + DIGITS, 10, 3100), {"stripe-secret-key": 1}),
        ("sk_prod_" + fake(ALNUM, 99, 3101), {"stripe-secret-key": 1}),
        ("sk_test_" + fake(ALNUM, 9, 3102), {}),  # under 10
        ("sk_test_mode_enabled and rk_live_flag", {}),
        ("sk_test_" + fake(HEX, 12, 3103) + "_suffix", {}),  # part of a longer name
    ],
)
def test_stripe_keys_from_ten_characters(text: str, counts: dict[str, int]) -> None:
    assert redact_text(text).counts == counts


@pytest.mark.parametrize(
    ("part", "shape"),
    [
        ("xxxxxxxxxxxxxxxx", True),
        ("ab12XXXXXcd34", True),
        ("ab12xxxxcd34ef56", False),  # four x's: too common in real tokens to count
        ("IOSFODNN7EXAMPLE", True),
        ("my-example-token", True),
        ("0000000012345678", True),
        ("abcabcabcabcabca", True),
        ("deadbeefdeadbeef", True),
        ("0123456789abcdef", True),
        ("zyxwvutsrqponmlk", True),
        ("your-token-here", True),
        ("YOUR_TOKEN_HERE", True),
        ("Your.Token~Here", True),
        ("kGabElpgtotay-vdsRfk", False),  # random: words mix cases
        ("aaaaabbbbbcccccddddd", True),  # it stutters
        ("aabbccddeeffgghh", True),
        ("insertyourtokenhere", True),  # spelt with default words
        ("yoursecretkeyhere", True),
        # lower case only, in parts longer than a word (github_pat_<22>_<59>): no name
        (fake(LOWER, 22, 3003) + "_" + fake(LOWER, 59, 3004), False),
        (fake(HEX, 10, 3005), False),
        (fake(ALNUM, 36, 3000), False),
        (fake(HEX, 32, 3001), False),
    ],
)
def test_placeholder_shapes(part: str, shape: bool) -> None:
    assert placeholder_shape(part) is shape


def test_is_random_needs_the_threshold_and_no_placeholder_shape() -> None:
    body = fake(ALNUM, 36, 3002)
    assert is_random(body, 3.5)
    assert not is_random(body, 6.0)  # above log2(36): no 36-character string reaches it
    assert not is_random("0123456789abcdef0123456789abcdef", 2.5)  # 4.0 bits, but counts up


# Long adversarial inputs for the new rules: quadratic work on any would keep this from
# finishing. Each must come back unchanged (the times are in the report / docs).
LONG_INPUTS = {
    "stripe-prefixes": "sk_live_" * 50_000,
    "letters": "a" * 200_000,
    "sendgrid-prefixes": "SG." * 50_000,
    "sendgrid-ids": ("SG." + "a" * 24 + ".") * 10_000,
    "databricks-zeros": "dapi" + "0" * 100_000,
    "databricks-prefixes": "dapi" * 50_000,
    "azure-tildes": "~" * 200_000,
    "azure-heads": "abc1Q~" * 30_000,
    "azure-heads-spaced": "abc1Q~ " * 30_000,
    "azure-long-tail": "abc1Q~" + "a" * 200_000,
    "azure-dots": ("abc1Q~" + "." * 31 + " ") * 4_000,
    "gitlab-prefixes": "-glpat-" * 30_000,
    "gitlab-routes": "glpat-" + "a" * 20 + ".aa" * 50_000,
    "gitlab-runner": "GR1348941" * 20_000,
    "slack-hooks": "hooks.slack.com/services/" * 10_000,
    "slack-hooks-escaped": "\\nhooks.slack.com/services/T" * 8_000,
    "pypi-prefixes": "pypi-AgEIcHlwaS5vcmc" * 10_000,
    "atlassian-run": "ATATT3" + "A" * 200_000,
    "atlassian-checksums": "ATATT3" + "a" * 100 + "%3D" * 50_000,
    "heroku-prefixes": "HRKU-" * 40_000,
    "heroku-keys": "heroku_key=" * 20_000,
    "heroku-key-then-spaces": "HEROKU_KEY" + "%20" * 100_000,
    "twilio-prefixes": "SK" * 100_000,
    "hf-prefixes": "hf_" * 60_000,
    "npm-prefixes": "npm_" * 50_000,
    "docker-prefixes": "dckr_pat_" * 20_000,
    "escaped-stripe": "\\nsk_live_" * 20_000,
    "encoded-azure": "%20abc1Q~" * 20_000,
}


@pytest.mark.parametrize("text", LONG_INPUTS.values(), ids=LONG_INPUTS.keys())
def test_long_adversarial_inputs_are_read_in_linear_time(text: str) -> None:
    assert redact_text(text) == Redaction(text, {})


@pytest.mark.parametrize("rule", sorted(NEW_TOKENS))
def test_many_tokens_in_a_row_are_each_replaced(rule: str) -> None:
    token = NEW_TOKENS[rule][0]
    assert redact_text(f"\\n{token} " * 2_000).counts == {rule: 2_000}


def test_a_url_encoded_private_key() -> None:
    import urllib.parse

    body = [fake(string.ascii_letters + string.digits + "+/", 64, seed) for seed in (1, 2, 3)]
    pem = "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(body) + "\n-----END RSA PRIVATE KEY-----"
    encoded = urllib.parse.quote(pem)
    assert redact_text(f"key={encoded}&next=1").text == "key=[REDACTED:private-key]&next=1"
    cut = encoded[: encoded.index("%0A", encoded.index("%0A") + 1) + 20]  # cut in its 2nd line
    assert redact_text(f"key={cut}").text == "key=[REDACTED:private-key]"
    assert redact_text("see -----BEGIN%20RSA%20PRIVATE%20KEY----- in the docs").counts == {}
