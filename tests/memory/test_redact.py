"""clm_policy.memory.redact: every rule on fake secrets in several contexts, exact output,
what is left alone, idempotence, counts, plain data, the Redactor, random placement.

Every fake secret is generated here from a seeded random.Random; none is a real key.
"""

from __future__ import annotations

import base64
import json
import random
import re
import string
import textwrap

import pytest

from clm_policy.memory.redact import (
    RULES,
    Redaction,
    Redactor,
    looks_secret,
    redact_data,
    redact_text,
    shannon_entropy,
)

from conftest import REPO

UPPER_ALNUM = string.ascii_uppercase + string.digits
ALNUM = string.ascii_letters + string.digits
URLSAFE = ALNUM + "_-"
B64 = ALNUM + "+/"


def fake(alphabet: str, n: int, seed: int) -> str:
    """``n`` random-looking characters, the same on every run."""
    rng = random.Random(seed)
    return "".join(rng.choice(alphabet) for _ in range(n))


def pem(label: str, seed: int) -> str:
    body = "\n".join(fake(B64, 64, seed + i) for i in range(5))
    return f"-----BEGIN {label}-----\nMII{body}\n{fake(B64, 20, seed)}==\n-----END {label}-----"


# rule id -> fake secrets it must replace whole (first one: used in the context table).
TOKENS: dict[str, list[str]] = {
    "private-key": [
        pem("RSA PRIVATE KEY", 1),
        pem("EC PRIVATE KEY", 2),
        pem("OPENSSH PRIVATE KEY", 3),
        pem("DSA PRIVATE KEY", 4),
        pem("PRIVATE KEY", 5),
        pem("ENCRYPTED PRIVATE KEY", 6),
        pem("PGP PRIVATE KEY BLOCK", 7).replace("MII", "Version: Fake 1.0\n\nlQ"),
    ],
    "aws-access-key-id": [
        f"{p}{fake(UPPER_ALNUM, 16, 10)}" for p in ("AKIA", "ASIA", "ABIA", "ACCA")
    ],
    "github-pat": ["ghp_" + fake(ALNUM, 36, 20)],
    "github-oauth": ["gho_" + fake(ALNUM, 36, 21)],
    "github-app-token": ["ghs_" + fake(ALNUM, 36, 22), "ghu_" + fake(ALNUM, 36, 23)],
    "github-refresh-token": ["ghr_" + fake(ALNUM, 36, 24)],
    "github-fine-grained-pat": ["github_pat_" + fake(ALNUM, 22, 25) + "_" + fake(ALNUM, 59, 26)],
    "anthropic-api-key": [
        "sk-ant-api03-" + fake(URLSAFE, 93, 30) + "AA",
        "sk-ant-oat01-" + fake(URLSAFE, 93, 31) + "AA",
    ],
    "anthropic-admin-key": ["sk-ant-admin01-" + fake(URLSAFE, 93, 32) + "AA"],
    "openai-api-key": [
        "sk-proj-" + fake(URLSAFE, 74, 40) + "T3BlbkFJ" + fake(URLSAFE, 74, 41),
        "sk-svcacct-" + fake(URLSAFE, 58, 42) + "T3BlbkFJ" + fake(URLSAFE, 58, 43),
        "sk-admin-" + fake(URLSAFE, 58, 44) + "T3BlbkFJ" + fake(URLSAFE, 58, 45),
        "sk-" + fake(ALNUM, 20, 46) + "T3BlbkFJ" + fake(ALNUM, 20, 47),
    ],
    "slack-token": [
        f"xox{kind}-{fake(string.digits, 12, 50)}-{fake(string.digits, 13, 51)}-{fake(ALNUM, 24, 52)}"
        for kind in "bpars"
    ]
    + [f"xapp-1-A{fake(UPPER_ALNUM, 10, 53)}-{fake(string.digits, 13, 54)}-{fake(ALNUM, 64, 55)}"],
    "slack-webhook-url": [
        "https://hooks.slack.com/services/"
        f"T{fake(UPPER_ALNUM, 8, 60)}/B{fake(UPPER_ALNUM, 10, 61)}/{fake(ALNUM, 24, 62)}"
    ],
    "gcp-api-key": ["AIza" + fake(URLSAFE, 35, 70)],
    "jwt": [f"eyJhbGciOiJIUzI1NiJ9.eyJ{fake(URLSAFE, 60, 80)}.{fake(URLSAFE, 43, 81)}"],
}

TOKEN_CONTEXTS = [
    "the key is {s}, rotate it.",
    '{{"note": "{s}", "n": 1}}',
    "settings:\n  value: {s}\n",
    "SOME_VALUE={s}\n",
    "export API_TOKEN={s}\n",
    "curl -H 'X-Key: {s}' https://api.example.com/v1/items",
    'client = Client(key="{s}")\n',
    "> {s}\n",
]


def _token_cases() -> list[tuple[str, str]]:
    return [(rule, secret) for rule, secrets in TOKENS.items() for secret in secrets]


def _short(value: object) -> str:
    return repr(value)[:32]


@pytest.mark.parametrize(("rule", "secret"), _token_cases(), ids=lambda v: str(v)[:16])
@pytest.mark.parametrize("context", TOKEN_CONTEXTS, ids=_short)
def test_token_rules_replace_the_whole_token(rule: str, secret: str, context: str) -> None:
    result = redact_text(context.format(s=secret))
    assert result.text == context.format(s=f"[REDACTED:{rule}]")
    assert result.counts == {rule: 1}


def test_every_rule_is_exercised() -> None:
    # the providers' tokens added later are exercised in test_redact_tokens.py, the tools'
    # password places in test_redact_tools.py, a shell's command line in test_redact_shell.py
    from test_redact_shell import FOUND as SHELL
    from test_redact_tokens import NEW_TOKENS
    from test_redact_tools import FOUND

    tools = {
        rule
        for _, out in (*FOUND, *SHELL)
        for rule in re.findall(r"\[REDACTED:([a-z0-9-]+)\]", out)
    }
    ids = {r.id for r in RULES}
    assert ids == set(TOKENS) | set(NEW_TOKENS) | {r for r, _, _ in KEY_VALUE} | tools


def test_every_pattern_compiles_once_and_only_when_a_text_may_hold_its_secret() -> None:
    import subprocess
    import sys

    for rule in RULES:
        assert "secret" in rule.pattern.groupindex, rule.id
        assert rule.pattern is rule.pattern  # compiled once
    # A fresh process: a text no pre-test or anchor lets through compiles no rule's pattern.
    probe = (
        "from clm_policy.memory.redact import RULES, redact_text\n"
        "redact_text('Goal: ship it. Context: 400000 -> 101 (estimated)')\n"
        "print(sum(r.compiled for r in RULES))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout == "0\n"


def test_importing_the_redactor_compiles_nothing_and_loads_nothing_heavy() -> None:
    """The hooks import the redactor (hook advice is redacted): the import compiles no regular
    expression and loads none of the modules the hot paths keep out (typing, dataclasses,
    inspect); redacting a line compiles only what that line needs."""
    import subprocess
    import sys

    probe = (
        "import re, sys\n"
        "compiled = []\n"
        "real = re.compile\n"
        "re.compile = lambda *a: compiled.append(a[0]) or real(*a)\n"
        "import clm_policy.memory.redact as r\n"
        "heavy = [m for m in ('typing', 'dataclasses', 'inspect', 'base64') if m in sys.modules]\n"
        "print(len(compiled), heavy)\n"
        "r.redact_text('curl -H \"X-Api-Key: 9c1f04be7d2a6e35\" https://api.example.com')\n"
        "print(sum(rule.compiled for rule in r.RULES), len(r.RULES))\n"
    )
    # -S: no site-packages, no .pth file, so nothing the environment imports counts; the
    # package comes from the repository, the working directory
    done = subprocess.run(
        [sys.executable, "-S", "-c", probe], capture_output=True, text=True, check=True, cwd=REPO
    )
    # the header rule, the generic key/value rule (its anchor saw "api"), url-password ("://")
    # and the rule of a header given to curl -H (a ...-Key named by no other rule)
    assert done.stdout == f"0 []\n4 {len(RULES)}\n"


def test_anthropic_wins_over_openai() -> None:
    key = TOKENS["anthropic-api-key"][0]
    assert redact_text(f"OPENAI_API_KEY={key}").counts == {"anthropic-api-key": 1}
    assert (
        redact_text(f'openai.api_key = "{key}"').text
        == 'openai.api_key = "[REDACTED:anthropic-api-key]"'
    )


def test_private_key_escaped_in_json() -> None:
    key = TOKENS["private-key"][0]
    document = json.dumps({"type": "service_account", "private_key": key + "\n"})
    assert redact_text(document).text == (
        '{"type": "service_account", "private_key": "[REDACTED:private-key]\\n"}'
    )


def test_truncated_private_key_loses_its_body() -> None:
    key = TOKENS["private-key"][0]
    cut = key[: key.index("\n", 200)] + "\n[output truncated]\n"
    assert redact_text(cut).text == "[REDACTED:private-key]\n[output truncated]\n"


V = fake(ALNUM, 20, 100)  # a random value
AWS_SECRET = fake(B64, 40, 101)
BASIC = base64.b64encode(b"deploy:" + fake(ALNUM, 16, 102).encode()).decode()
URL_PASSWORD = fake(ALNUM, 14, 103)

# (rule, text, expected): key/value rules keep the key and replace the value.
# fmt: off
KEY_VALUE: list[tuple[str, str, str]] = [
    ("generic-secret", f"DB_PASSWORD={V}", "DB_PASSWORD=[REDACTED:generic-secret]"),
    ("generic-secret", f'export API_TOKEN="{V}"', 'export API_TOKEN="[REDACTED:generic-secret]"'),
    ("generic-secret", f"  client_secret: {V}", "  client_secret: [REDACTED:generic-secret]"),
    ("generic-secret", f"password: '{V}'", "password: '[REDACTED:generic-secret]'"),
    ("generic-secret", f'{{"apiKey": "{V}", "user": "bob"}}', '{"apiKey": "[REDACTED:generic-secret]", "user": "bob"}'),
    ("generic-secret", f'"{{\\"password\\": \\"{V}\\"}}"', '"{\\"password\\": \\"[REDACTED:generic-secret]\\"}"'),
    ("generic-secret", f'access_key = "{V}"', 'access_key = "[REDACTED:generic-secret]"'),
    ("generic-secret", f'password: str = "{V}"', 'password: str = "[REDACTED:generic-secret]"'),
    ("generic-secret", f'connect(host, auth_token="{V}")', 'connect(host, auth_token="[REDACTED:generic-secret]")'),
    ("generic-secret", f"'secret' => '{V}',", "'secret' => '[REDACTED:generic-secret]',"),
    ("generic-secret", f"mysql --password {V} --user root", "mysql --password [REDACTED:generic-secret] --user root"),
    ("generic-secret", f"deploy --db-token={V} --dry-run", "deploy --db-token=[REDACTED:generic-secret] --dry-run"),
    ("generic-secret", f"passwd = {V}", "passwd = [REDACTED:generic-secret]"),
    ("generic-secret", f"GET /v1/items?token={V}&page=2", "GET /v1/items?token=[REDACTED:generic-secret]&page=2"),
    ("generic-secret", f"dbPassword={V}", "dbPassword=[REDACTED:generic-secret]"),
    ("generic-secret", f"oauth_token: {V}", "oauth_token: [REDACTED:generic-secret]"),
    ("generic-secret", "pwd=Xk9mQ2pL", "pwd=[REDACTED:generic-secret]"),
    ("generic-secret", f"apikey:{V}", "apikey:[REDACTED:generic-secret]"),
    ("aws-secret-access-key", f"aws_secret_access_key = {AWS_SECRET}", "aws_secret_access_key = [REDACTED:aws-secret-access-key]"),
    ("aws-secret-access-key", f'"SecretAccessKey": "{AWS_SECRET}",', '"SecretAccessKey": "[REDACTED:aws-secret-access-key]",'),
    ("aws-secret-access-key", f"AWS_SECRET_ACCESS_KEY={AWS_SECRET}", "AWS_SECRET_ACCESS_KEY=[REDACTED:aws-secret-access-key]"),
    ("bearer-token", f'curl -H "Authorization: Bearer {V}" https://x.example', 'curl -H "Authorization: Bearer [REDACTED:bearer-token]" https://x.example'),
    ("bearer-token", f'headers = {{"Authorization": "Bearer {V}"}}', 'headers = {"Authorization": "Bearer [REDACTED:bearer-token]"}'),
    ("bearer-token", f"authorization: bearer {V}", "authorization: bearer [REDACTED:bearer-token]"),
    ("basic-auth", f"Authorization: Basic {BASIC}", "Authorization: Basic [REDACTED:basic-auth]"),
    ("auth-header", f"curl -H 'Authorization: Token {V}' https://x.example", "curl -H 'Authorization: Token [REDACTED:auth-header]' https://x.example"),
    ("curl-user-password", f"curl -u deploy:{V} https://x.example", "curl -u deploy:[REDACTED:curl-user-password] https://x.example"),
    ("url-password", f"postgres://app:{URL_PASSWORD}@db.internal:5432/app", "postgres://app:[REDACTED:url-password]@db.internal:5432/app"),
    ("url-password", f"git clone https://bob:{URL_PASSWORD}@git.example.com/r.git", "git clone https://bob:[REDACTED:url-password]@git.example.com/r.git"),
]
# fmt: on


@pytest.mark.parametrize(("rule", "text", "expected"), KEY_VALUE, ids=_short)
def test_key_value_rules_keep_the_key(rule: str, text: str, expected: str) -> None:
    result = redact_text(text)
    assert result.text == expected
    assert result.counts == {rule: 1}


def test_exact_output_of_an_env_file() -> None:
    env = textwrap.dedent(f"""\
        # staging
        DATABASE_URL=postgres://app:{URL_PASSWORD}@db:5432/app
        DB_PASSWORD={V}
        DB_USER=app
        GITHUB_TOKEN={TOKENS["github-pat"][0]}
        OPENAI_API_KEY=${{OPENAI_API_KEY}}
        DEBUG=true
        """)
    result = redact_text(env)
    assert result.text == textwrap.dedent("""\
        # staging
        DATABASE_URL=postgres://app:[REDACTED:url-password]@db:5432/app
        DB_PASSWORD=[REDACTED:generic-secret]
        DB_USER=app
        GITHUB_TOKEN=[REDACTED:github-pat]
        OPENAI_API_KEY=${OPENAI_API_KEY}
        DEBUG=true
        """)
    assert result.counts == {"github-pat": 1, "url-password": 1, "generic-secret": 1}
    assert result.total == 3


def test_exact_output_of_a_transcript_line() -> None:
    line = json.dumps(
        {
            "role": "tool",
            "content": f"$ curl -s -H 'Authorization: Bearer {TOKENS['openai-api-key'][0]}' "
            f"https://api.openai.com/v1/models\n{TOKENS['private-key'][2]}",
            "usage": {"input_tokens": 1234, "output_tokens": 56},
        }
    )
    assert json.loads(redact_text(line).text) == {
        "role": "tool",
        "content": "$ curl -s -H 'Authorization: Bearer [REDACTED:openai-api-key]' "
        "https://api.openai.com/v1/models\n[REDACTED:private-key]",
        "usage": {"input_tokens": 1234, "output_tokens": 56},
    }


NOT_SECRETS = [
    "commit 3f9a2c47e1b8d05f6a7c9e2b4d8f1a3c5e7b9d0f",
    "sha: 3f9a2c47e1b8d05f6a7c9e2b4d8f1a3c5e7b9d0f",
    "session 9b2f6c1e-4d7a-4e3b-9c8d-2a1f0e5b7c6d",
    "id: 9b2f6c1e-4d7a-4e3b-9c8d-2a1f0e5b7c6d",
    "image: ghcr.io/acme/app@sha256:" + "a3f1" * 16,
    "edited /home/dev/project/src/api_key_loader.py and ./secrets/README.md",
    "see https://api.openai.com/v1/chat/completions?model=gpt-4o&stream=true",
    "the payload is SGVsbG8sIHRoaXMgaXMgYSBwZXJmZWN0bHkgb3JkaW5hcnkgc2VudGVuY2Uu in base64",
    "update the task-list, the risk-assessment and disk-usage; ask-questions later",
    "keys look like sk-... or sk-proj-...; never paste one",
    'api_key_env = "OPENAI_API_KEY"',
    "api_key_env: ANTHROPIC_API_KEY_PRODUCTION",
    "password: ${DB_PASSWORD}",
    'password: "${DB_PASSWORD}"',
    "token: ${{ secrets.GITHUB_TOKEN }}",
    'gh auth login --with-token "$GITHUB_TOKEN"',
    "password: <your-password>",
    'password: "********"',
    "password: changeme",
    "password = hunter2",
    "password: required",
    "max_tokens: 4096",
    '{"input_tokens": 1234567, "cache_read_input_tokens": 0}',
    "context_tokens=175_000",
    "tokenizer: cl100k_base",
    "author: Jane Doe",
    "secretary_id: Zq8vT3nLw5Yp2Rk7",
    "token = get_token(request)",
    "secret = settings.SECRET_KEY",
    'password = os.environ["DB_PASSWORD"]',
    "auth = HTTPBasicAuth(user, password)",
    "auth_token: Optional[str] = None",
    "auth_url: https://auth.example.com/oauth/token",
    "token_file: ~/.config/gh/hosts.yml",
    "secret_name: prod/db/password",
    "auth_backend: django.contrib.auth.backends.ModelBackend",
    "notify_email: ops@example.com",
    '"api_key": null',
    "Authorization: Bearer $TOKEN",
    "Authorization: Bearer <token>",
    "Authorization: Bearer YOUR_API_TOKEN",
    "the bearer of this message",
    "Bearer authentication sends a token",
    "keys start with -----BEGIN OPENSSH PRIVATE KEY----- and nothing else here",
    "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAu1SU1LfVLPHCozMxH2Mo\n-----END PUBLIC KEY-----",
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGb3x9Kk2Lr8c5mYhQ7pTz1nWv0eRs4jUf6dXa2Bo3Ci dev@laptop",
    '{"id": "toolu_01A09q90qw90lq917835lq9", "signature": "EqQBCkgIARABGAIqQHx7Yb9"}',
    "clone git@github.com:acme/app.git or ssh://git@github.com/acme/app.git",
    "listening on http://localhost:8080/health",
    'dsn = f"postgresql://{user}:{password}@{host}/{db}"',
    "the access token: `eyJ….eyJ….signature`",
    "[REDACTED:github-pat] and password=[REDACTED:generic-secret]",
]


@pytest.mark.parametrize("text", NOT_SECRETS, ids=_short)
def test_ordinary_content_is_left_alone(text: str) -> None:
    assert redact_text(text) == Redaction(text, {})


def _all_samples() -> list[str]:
    samples = [c.format(s=s) for _, s in _token_cases() for c in TOKEN_CONTEXTS]
    return samples + [text for _, text, _ in KEY_VALUE] + NOT_SECRETS


def test_redacting_twice_changes_nothing() -> None:
    for sample in _all_samples():
        once = redact_text(sample).text
        assert redact_text(once) == Redaction(once, {}), sample


def test_counts_per_rule() -> None:
    pat, other = TOKENS["github-pat"][0], "ghp_" + fake(ALNUM, 36, 200)
    result = redact_text(f"{pat}\n{other}\npassword={V}\n{pat}\n")
    assert result.counts == {"github-pat": 3, "generic-secret": 1}
    assert result.total == 4
    with pytest.raises(TypeError):
        result.counts["x"] = 1


def test_entropy_check() -> None:
    assert (shannon_entropy(""), shannon_entropy("aaaa"), shannon_entropy("abab")) == (
        0.0,
        0.0,
        1.0,
    )
    assert shannon_entropy("changeme") == pytest.approx(2.75)
    assert not looks_secret("changeme")
    assert not looks_secret("Xk9mQ2")  # too short
    assert looks_secret("Xk9mQ2pL")  # short, but every character differs and it mixes classes
    assert looks_secret(V)


def test_offsets_survive_a_character_that_lower_cases_to_two() -> None:
    assert redact_text(f"İstanbul DB_PASSWORD={V} ok").text == (
        "İstanbul DB_PASSWORD=[REDACTED:generic-secret] ok"
    )


def test_redact_data_walks_keys_values_lists_and_tuples() -> None:
    pat, slack = TOKENS["github-pat"][0], TOKENS["slack-token"][0]
    data = {
        "session": "s-1",
        "env": {"DB_PASSWORD": V, "HOME": "/home/dev", "password": "changeme", "pin": 12345678},
        "notes": [f"rotate {pat}", ("tuple", slack), 3, 1.5, True, None],
        pat: "a secret used as a key",
        "aws": {"aws_secret_access_key": AWS_SECRET, "region": "eu-west-1"},
        "apiKey": "${API_KEY}",
    }
    redacted, counts = redact_data(data)
    assert redacted == {
        "session": "s-1",
        "env": {
            "DB_PASSWORD": "[REDACTED:generic-secret]",
            "HOME": "/home/dev",
            "password": "changeme",
            "pin": 12345678,
        },
        "notes": [
            "rotate [REDACTED:github-pat]",
            ("tuple", "[REDACTED:slack-token]"),
            3,
            1.5,
            True,
            None,
        ],
        "[REDACTED:github-pat]": "a secret used as a key",
        "aws": {"aws_secret_access_key": "[REDACTED:aws-secret-access-key]", "region": "eu-west-1"},
        "apiKey": "${API_KEY}",
    }
    assert counts == {
        "generic-secret": 1,
        "github-pat": 2,
        "slack-token": 1,
        "aws-secret-access-key": 1,
    }
    assert data["env"]["DB_PASSWORD"] == V  # the input is not changed


def test_redact_data_refuses_what_it_cannot_read() -> None:
    with pytest.raises(TypeError, match="redact_data walks dict, list, tuple, str"):
        redact_data({"tags": {"a", "b"}})


def test_redactor_accumulates_across_calls() -> None:
    redactor = Redactor()
    assert redactor.text(f"token {TOKENS['github-pat'][0]}") == "token [REDACTED:github-pat]"
    first = redactor.counts
    assert redactor.data({"password": V, "n": [TOKENS["jwt"][0]]}) == {
        "password": "[REDACTED:generic-secret]",
        "n": ["[REDACTED:jwt]"],
    }
    assert redactor.text("nothing here") == "nothing here"
    # the same secret again is replaced again, but counted once: counts are distinct secrets
    assert redactor.text(TOKENS["github-pat"][0]) == "[REDACTED:github-pat]"
    assert redactor.counts == {"github-pat": 1, "jwt": 1, "generic-secret": 1}
    assert redactor.text(TOKENS["github-oauth"][0]) == "[REDACTED:github-oauth]"
    assert redactor.counts == {"github-pat": 1, "github-oauth": 1, "jwt": 1, "generic-secret": 1}
    assert redactor.total == 4
    assert first == {"github-pat": 1}  # counts is a snapshot


def test_a_tagging_redactor_counts_only_what_is_kept() -> None:
    first = Redactor(tag=True)
    kept = first.text(f"keep {TOKENS['github-pat'][0]} and {TOKENS['jwt'][0]}")
    dropped = first.text(f"drop {TOKENS['openai-api-key'][0]}")
    assert "[REDACTED:openai-api-key]" in dropped
    assert first.total == 0  # nothing settled yet
    cut = kept[: kept.index("[REDACTED:jwt]") - 2]  # the jwt's tag is cut in half
    assert first.settle(cut) == "keep [REDACTED:github-pat] and "
    assert first.counts == {"github-pat": 1}
    assert first.settle({"k": [kept]}) == {"k": ["keep [REDACTED:github-pat] and [REDACTED:jwt]"]}
    assert first.counts == {"github-pat": 1, "jwt": 1}
    assert "\ue000" not in first.settle(kept + dropped)


WORDS = [
    "the", "agent", "ran", "tests", "and", "fixed", "a", "flaky", "retry", "loop", "in",
    "src/app/main.py", "3f9a2c47e1b8d05f6a7c9e2b4d8f1a3c5e7b9d0f", "max_tokens=4096",
    "9b2f6c1e-4d7a-4e3b-9c8d-2a1f0e5b7c6d", "https://example.com/docs?page=2", "task-list",
    "password: changeme", "user=bob", "42", "(see", "notes)", "**done**", "`code`", "#",
]  # fmt: skip
LEFT = [" ", "\n", "\t", "(", "[", "> ", ": "]
RIGHT = [" ", "\n", "\t", ")", "]", ", ", "; "]


def _embedded_cases() -> list[tuple[str, str, str]]:
    """(rule, text containing a secret, the text redacted) for one form of each rule."""
    cases = [(rule, secrets[0], f"[REDACTED:{rule}]") for rule, secrets in TOKENS.items()]
    for rule, text, expected in KEY_VALUE:
        if all(r != rule for r, _, _ in cases):
            cases.append((rule, text, expected))
    return cases


@pytest.mark.parametrize(
    ("rule", "secret", "marker"), _embedded_cases(), ids=[c[0] for c in _embedded_cases()]
)
def test_secret_at_random_positions_is_removed_and_the_rest_kept(
    rule: str, secret: str, marker: str
) -> None:
    rng = random.Random(f"clm-redact-{rule}")
    for _ in range(40):
        before = " ".join(rng.choices(WORDS, k=rng.randrange(0, 30)))
        after = " ".join(rng.choices(WORDS, k=rng.randrange(0, 30)))
        left, right = rng.choice(LEFT), rng.choice(RIGHT)
        result = redact_text(before + left + secret + right + after)
        assert result.text == before + left + marker + right + after
        assert result.counts == {rule: 1}


def test_docs_list_every_rule() -> None:
    doc = (REPO / "docs" / "redaction.md").read_text(encoding="utf-8")
    for rule in {r.id for r in RULES}:
        assert f"| `{rule}` |" in doc
    assert "gitleaks" in doc


def test_docs_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    doc = (REPO / "docs" / "redaction.md").read_text(encoding="utf-8")
    (block,) = re.findall(r"```python\n(.*?)```", doc, flags=re.S)
    exec(compile(block, "docs/redaction.md", "exec"), {})
    expected = [line[2:] for line in block.splitlines() if line.startswith("# ")]
    assert capsys.readouterr().out.splitlines() == expected


# -- boundaries: an escape before a token or a key is no word character ----------------------

# JSON escapes and URL encodings that can sit right before a token; their last character is a
# letter or digit, and the token after them still stands alone.
ESCAPES = ["\\n", "\\t", "\\r", '\\"', "\\r\\n", "\\u0022", "%20", "%3D", "%3A", "%0A", "%0D%0A", "%22", "%2C", "%09"]  # fmt: skip


@pytest.mark.parametrize("escape", ESCAPES)
@pytest.mark.parametrize(
    ("rule", "secret"), [(r, s[0]) for r, s in TOKENS.items()], ids=lambda v: str(v)[:16]
)
def test_a_token_right_after_an_escape_is_redacted(rule: str, secret: str, escape: str) -> None:
    text = f'"output": "line1{escape}{secret}{escape}end"'
    result = redact_text(text)
    assert result.text == f'"output": "line1{escape}[REDACTED:{rule}]{escape}end"'
    assert result.counts == {rule: 1}


GLUED = ["github-pat", "openai-api-key", "anthropic-api-key", "aws-access-key-id", "slack-token", "gcp-api-key", "jwt"]  # fmt: skip


@pytest.mark.parametrize("rule", GLUED)
@pytest.mark.parametrize("before", ["x", "line1", "%2", "n", "u0022", "%%2"])
def test_a_token_glued_to_a_word_is_still_left_alone(rule: str, before: str) -> None:
    text = f"{before}{TOKENS[rule][0]}"
    assert redact_text(text) == Redaction(text, {})


# fmt: off
ENCODED_KEY_VALUE: list[tuple[str, str, str]] = [
    ("generic-secret", f'"output": "line1\\npassword={V}"', '"output": "line1\\npassword=[REDACTED:generic-secret]"'),
    ("generic-secret", f'"output": "a\\tDB_PASSWORD=\\"{V}\\""', '"output": "a\\tDB_PASSWORD=\\"[REDACTED:generic-secret]\\""'),
    ("generic-secret", f'"env": "x\\r\\napi_key: {V}"', '"env": "x\\r\\napi_key: [REDACTED:generic-secret]"'),
    ("generic-secret", f"a\\u0022token={V}", "a\\u0022token=[REDACTED:generic-secret]"),
    ("generic-secret", f"next=%2Fcb%3Fpassword%3D{V}%26state%3D1", "next=%2Fcb%3Fpassword%3D[REDACTED:generic-secret]%26state%3D1"),
    ("generic-secret", f"q=x%0Atoken%3A{V}%0A", "q=x%0Atoken%3A[REDACTED:generic-secret]%0A"),
    ("generic-secret", f"q=x%20secret%3D{V}%20y", "q=x%20secret%3D[REDACTED:generic-secret]%20y"),
    ("generic-secret", f"d=%22apiKey%22%3A%22{V}%22%2C%22user%22", "d=%22apiKey%22%3A%22[REDACTED:generic-secret]%22%2C%22user%22"),
    ("generic-secret", f"d=client_secret%3A%20{V}%3B", "d=client_secret%3A%20[REDACTED:generic-secret]%3B"),
    ("generic-secret", f'"cmd": "x\\n--password {V}"', '"cmd": "x\\n--password [REDACTED:generic-secret]"'),
    ("generic-secret", f"cmd=deploy%20--db-token%20{V}", "cmd=deploy%20--db-token%20[REDACTED:generic-secret]"),
    ("aws-secret-access-key", f"x%0Aaws_secret_access_key%3D{AWS_SECRET}%26", "x%0Aaws_secret_access_key%3D[REDACTED:aws-secret-access-key]%26"),
    ("aws-secret-access-key", f'"a\\nAWS_SECRET_ACCESS_KEY=\\"{AWS_SECRET}\\""', '"a\\nAWS_SECRET_ACCESS_KEY=\\"[REDACTED:aws-secret-access-key]\\""'),
    ("bearer-token", f"h=Authorization%3A%20Bearer%20{V}%0A", "h=Authorization%3A%20Bearer%20[REDACTED:bearer-token]%0A"),
    ("bearer-token", f'"log": "x\\nBearer {V}"', '"log": "x\\nBearer [REDACTED:bearer-token]"'),
    ("basic-auth", f"h=Authorization%3A%20Basic%20{BASIC}%0A", "h=Authorization%3A%20Basic%20[REDACTED:basic-auth]%0A"),
]
# fmt: on


@pytest.mark.parametrize(("rule", "text", "expected"), ENCODED_KEY_VALUE, ids=_short)
def test_key_value_rules_after_an_escape_or_with_an_encoded_separator(
    rule: str, text: str, expected: str
) -> None:
    result = redact_text(text)
    assert result.text == expected
    assert result.counts == {rule: 1}


ENCODED_NOT_SECRETS = [
    '"text": "line1\\ntokenizer: cl100k_base"',
    "q=a%20max_tokens%3D4096",
    "see%20the%20task-list%0Aand%20risk-assessment",
    "path=%2Fhome%2Fdev%2Fapi_key_loader.py",
    "password%3Dchangeme",
    "api_key_env%3DOPENAI_API_KEY",
    "password%3D%24%7BDB_PASSWORD%7D",
    "token%3D%3Cyour-token%3E",
    "keys look like sk-...%20or ghp_...",
    '"text": "short\\nghp_abc"',
    "a%20--password%20changeme",
    "Authorization%3A%20Bearer%20%24TOKEN",
    "x%0A-----BEGIN%20RSA%20PRIVATE%20KEY-----%20in%20prose",
]


@pytest.mark.parametrize("text", ENCODED_NOT_SECRETS, ids=_short)
def test_encoded_ordinary_content_is_left_alone(text: str) -> None:
    assert redact_text(text) == Redaction(text, {})


def test_redacting_escaped_and_encoded_text_twice_changes_nothing() -> None:
    samples = [f"a{e}{s}{e}b" for _, s in _token_cases() for e in ESCAPES]
    for sample in samples + [text for _, text, _ in ENCODED_KEY_VALUE] + ENCODED_NOT_SECRETS:
        once = redact_text(sample).text
        assert redact_text(once) == Redaction(once, {}), sample


def test_an_encoded_delimiter_ends_a_bare_value() -> None:
    # as "&", " ", ",", ";", '"' and a newline do; and %3D, an encoded query string's "="
    for encoded in ["%26", "%20", "%2C", "%3B", "%22", "%0A", "%3D"]:
        assert redact_text(f"x?password%3D{V}{encoded}page=2").text == (
            f"x?password%3D[REDACTED:generic-secret]{encoded}page=2"
        )


PEM_BODY = [fake(B64, 64, 300 + i) for i in range(4)]
PEM_HEADER = "-----BEGIN RSA PRIVATE KEY-----"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (PEM_HEADER + "\n" + "\n".join(PEM_BODY), "[REDACTED:private-key]"),
        (PEM_HEADER + "\n" + "\n".join(PEM_BODY[:2]) + "\n" + PEM_BODY[2][:30], "[REDACTED:private-key]"),
        (PEM_HEADER + "\r\n" + "\r\n".join(PEM_BODY) + "\r\n", "[REDACTED:private-key]\r\n"),
        (json.dumps({"out": PEM_HEADER + "\n" + "\n".join(PEM_BODY[:2])}), '{"out": "[REDACTED:private-key]"}'),
        (json.dumps({"out": PEM_HEADER + "\n" + "\n".join(PEM_BODY[:2])})[:-2], '{"out": "[REDACTED:private-key]'),
        (json.dumps({"out": PEM_HEADER + "\r\n" + PEM_BODY[0]}), '{"out": "[REDACTED:private-key]"}'),
        ("key: |\n  " + PEM_HEADER + "\n  " + "\n  ".join(PEM_BODY), "key: |\n  [REDACTED:private-key]"),
        # nothing to redact: no key body after the header, or no header left to know it by
        ("key: " + PEM_HEADER, "key: " + PEM_HEADER),
        ("-----BEGIN RSA PRIV", "-----BEGIN RSA PRIV"),
    ],
    ids=["ends", "mid-line", "crlf", "json", "json-unclosed", "json-crlf", "indented", "header-only", "cut-header"],
)  # fmt: skip
def test_a_private_key_cut_short(text: str, expected: str) -> None:
    assert redact_text(text).text == expected


LONG_RUNS = {
    "letters": "a" * 100_000,
    "json-newlines": "\\n" * 100_000,
    "url-spaces": "%20" * 100_000,
    "key-then-spaces": "password" + "%20" * 100_000,
    "unclosed-encoded-quote": "%22password%22%3A%22" + "a" * 100_000,
    "escaped-token-prefixes": "\\nghp_" * 20_000,
    "encoded-aws-prefixes": "%0AAKIA" * 15_000,
    "encoded-keys": "%20password%3D" * 8_000,
    "bearer-then-spaces": "Bearer" + "%20" * 100_000,
    "encoded-value": "password%3D" + "%41" * 30_000,
    "flag-then-spaces": "\\n--password" + "%20" * 100_000,
}


@pytest.mark.parametrize("text", LONG_RUNS.values(), ids=LONG_RUNS.keys())
def test_long_runs_of_escapes_are_read_in_linear_time(text: str) -> None:
    # Quadratic work on any of these would keep this test from finishing; the times are in
    # docs/redaction.md (Speed).
    assert redact_text(text) == Redaction(text, {})
    many = f"\\n{TOKENS['github-pat'][0]}" * 5_000
    assert redact_text(many).counts == {"github-pat": 5_000}
