"""A corpus for measuring the redactor: fake secrets of every kind in many contexts, and
non-secrets of the same shapes.

Every secret here is generated from a ``random.Random`` seeded with the sample's kind and
context, in the alphabet and length of its format (the formats as public scanner rule sets
describe them: gitleaks, trufflehog, detect-secrets); none is a real key and none is copied
from a scanner's tests. A :class:`Sample` holds its kind, its context, the text, and the
substrings that must not survive redaction (``secrets``): the token itself, or for a private
key each line of its body, as they stand in the text. A non-secret sample has no ``secrets``;
it passes when the redactor leaves its text unchanged.

Kinds are in four groups (:data:`GROUPS`). :data:`CLAIMED_KINDS` are the rules
docs/redaction.md claimed first, in the syntaxes it claims (plus one documented limit, a
URL-encoded PEM block, because every kind gets a URL-encoded context). :data:`ADDED_KINDS` are
the token formats added next, and two variants of claimed rules in syntaxes the docs did not
claim then: ``generic-secret/new-syntax`` (``curl -u``, XML elements, Go, PHP ``.=``,
``System.setProperty``, Makefile ``?=``, ...) and ``slack-webhook-url/no-scheme``.
:data:`SHAPE_KINDS` are the shapes a secret scanner's own rule tests (held out) showed missing:
tokens with a distinctive prefix whose body is hex or lower case only, ``curl -u`` passwords
with ``$``/``!``, quoted or after an empty user, and credentials in custom token headers
(``Token:``, ``X-Api-Key:``, ``PRIVATE-TOKEN:``) — each with near misses of its own shape.
:data:`TOOL_KINDS` are the places issue 26 found leaking: tools' password variables and
options, Azure Storage keys and SAS signatures, passwords in sentences, holding passwords a
person types.

The scanners' own rule tests (gitleaks' and detect-secrets' published cases) are data, not
generated: ``benchmarks/scanner_cases.py``.

:func:`evaluate` scores any redactor (a function from text to text) on the corpus: per kind,
recall (share of secret samples where no secret substring survives) and the false-alarm rate
(share of non-secret samples changed). ``benchmarks/bench_redact.py`` prints the figures and
``tests/memory/test_redaction_corpus.py`` holds the thresholds.
"""

from __future__ import annotations

import base64
import functools
import json
import random
import string
import urllib.parse
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

CLAIMED_KINDS: tuple[str, ...] = (
    "private-key",
    "aws-access-key-id",
    "aws-secret-access-key",
    "github-pat",
    "github-oauth",
    "github-app-token",
    "github-refresh-token",
    "github-fine-grained-pat",
    "anthropic-api-key",
    "anthropic-admin-key",
    "openai-api-key",
    "slack-token",
    "slack-webhook-url",
    "gcp-api-key",
    "jwt",
    "url-password",
    "bearer-token",
    "basic-auth",
    "generic-secret",
)
"""Kinds docs/redaction.md claims today."""

ADDED_KINDS: tuple[str, ...] = (
    "npm-token",
    "pypi-token",
    "stripe-secret-key",
    "stripe-restricted-key",
    "huggingface-token",
    "huggingface-org-token",
    "gitlab-pat",
    "gitlab-pipeline-trigger-token",
    "gitlab-runner-token",
    "gitlab-deploy-token",
    "azure-ad-client-secret",
    "dockerhub-pat",
    "digitalocean-token",
    "twilio-api-key",
    "sendgrid-api-key",
    "shopify-token",
    "atlassian-api-token",
    "databricks-token",
    "heroku-api-key",
    "generic-secret/new-syntax",
    "slack-webhook-url/no-scheme",
)
"""Kinds added next: new token formats, and claimed rules in syntaxes not claimed then."""

SHAPE_KINDS: tuple[str, ...] = (
    "token/narrow-body",
    "pypi-token/narrow-body",
    "stripe-key/narrow-body",
    "curl-user-password/shell",
    "token-header/custom",
)
"""Shapes a scanner's held-out rule tests found missing: a distinctive prefix with a hex or
lower-case body (GitHub, npm, Google, GitLab, Docker Hub, Heroku, Atlassian; PyPI; Stripe
``sk_``/``rk_`` ``live``/``test``/``prod`` with 10 to 99 characters), shell-quoted ``curl -u``
passwords, and custom token headers."""

TOOL_KINDS: tuple[str, ...] = (
    "password-variable",
    "command-line-password",
    "azure-storage-key",
    "azure-sas-signature",
    "prose-password",
)
"""The shapes issue 26 found leaking, written from the tools' own formats: the password
variables of libpq, MySQL, Redis, SSH and images (``PGPASSWORD``, ``DB_PASS``, ``DBPASSWORD``,
``PGPASS``, ``MYSQL_PWD``, ``REDISCLI_AUTH``, ``SSHPASS``), passwords on a command line
(``mysql -p…``, ``redis-cli -a``, ``sshpass -p``, ``docker login -p``, ``htpasswd -b``), Azure
Storage account and shared access keys and SAS signatures, and passwords a sentence names —
with the passwords a person types (words, digits, a symbol), not random strings."""

GROUPS: dict[str, tuple[str, ...]] = {
    "claimed": CLAIMED_KINDS,
    "added": ADDED_KINDS,
    "shapes": SHAPE_KINDS,
    "tools": TOOL_KINDS,
}
"""The kinds, by group (recall targets are per group: bench_redact.py)."""
ALL_KINDS: tuple[str, ...] = (*CLAIMED_KINDS, *ADDED_KINDS, *SHAPE_KINDS, *TOOL_KINDS)

ALNUM = string.ascii_letters + string.digits
UPPER_ALNUM = string.ascii_uppercase + string.digits
URLSAFE = ALNUM + "_-"
B64 = ALNUM + "+/"
HEX = "0123456789abcdef"
LETTERS = string.ascii_letters
AZURE = ALNUM + "_~."
# What JavaScript's encodeURI leaves alone: a secret in a URL keeps these characters raw.
URI_SAFE = ";,/?:@&=+$-_.!~*'()#"


@dataclass(frozen=True)
class Sample:
    """One text. ``secrets``: the substrings that must not survive (none: a non-secret)."""

    kind: str
    context: str
    text: str
    secrets: tuple[str, ...] = ()

    @property
    def is_secret(self) -> bool:
        return bool(self.secrets)

    @property
    def group(self) -> str:
        return next(group for group, kinds in GROUPS.items() if self.kind in kinds)


def _rng(*parts: str) -> random.Random:
    # A str seed is hashed with SHA-512: the same fakes on every run and machine.
    return random.Random("\x00".join(parts))


def _fake(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


# --- fake secrets, one generator per kind ------------------------------------------------


def _pem(rng: random.Random) -> str:
    label = rng.choice(["RSA ", "EC ", "OPENSSH ", "", "ENCRYPTED ", "DSA "])
    lines = [_fake(rng, B64, 64) for _ in range(rng.randint(4, 8))]
    lines.append(_fake(rng, B64, rng.randint(16, 60)) + "==")
    body = "\n".join(lines)
    return f"-----BEGIN {label}PRIVATE KEY-----\n{body}\n-----END {label}PRIVATE KEY-----"


def pem_body(pem: str) -> tuple[str, ...]:
    """The lines of a PEM block between its BEGIN and END lines: the key material."""
    return tuple(line for line in pem.splitlines() if line and not line.startswith("-----"))


def _jwt(rng: random.Random) -> str:
    def b64url(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).decode().rstrip("=")

    header = {"alg": rng.choice(["HS256", "RS256", "ES256"]), "typ": "JWT"}
    claims = {
        "sub": str(rng.randint(10**6, 10**9)),
        "name": _fake(rng, string.ascii_lowercase, 8),
        "iat": rng.randint(1_600_000_000, 1_800_000_000),
        "scope": rng.choice(["read", "read write", "admin"]),
    }
    parts = (json.dumps(header).encode(), json.dumps(claims).encode(), rng.randbytes(32))
    return ".".join(b64url(p) for p in parts)


def _slack_token(rng: random.Random) -> str:
    prefix = rng.choice(["xoxb", "xoxp", "xoxa", "xoxe", "xapp"])
    if prefix == "xapp":
        return f"xapp-1-A{_fake(rng, UPPER_ALNUM, 10)}-{_fake(rng, string.digits, 13)}-" + _fake(
            rng, HEX, 64
        )
    numbers = "-".join(_fake(rng, string.digits, rng.randint(10, 13)) for _ in range(2))
    return f"{prefix}-{numbers}-{_fake(rng, ALNUM, 24)}"


def _slack_webhook(rng: random.Random, scheme: str = "https://") -> str:
    team, bot = _fake(rng, UPPER_ALNUM, rng.randint(8, 10)), _fake(rng, UPPER_ALNUM, 10)
    return f"{scheme}hooks.slack.com/services/T{team}/B{bot}/{_fake(rng, ALNUM, 24)}"


def _openai(rng: random.Random) -> str:
    variant = rng.choice(["proj", "svcacct", "admin", "legacy"])
    if variant == "legacy":
        return "sk-" + _fake(rng, ALNUM, 48)
    return f"sk-{variant}-" + _fake(rng, URLSAFE, rng.choice([48, 74, 156]))


def _fine_grained(rng: random.Random) -> str:
    return f"github_pat_{_fake(rng, ALNUM, 22)}_{_fake(rng, ALNUM, 59)}"


def _aws_key_id(rng: random.Random) -> str:
    # AWS key ids are base32: upper-case letters and the digits 2-7.
    return rng.choice(["AKIA", "ASIA"]) + _fake(rng, string.ascii_uppercase + "234567", 16)


def _azure(rng: random.Random) -> str:
    head = _fake(rng, AZURE, 3) + rng.choice(string.digits) + "Q~"
    return head + _fake(rng, AZURE + "-", rng.randint(31, 34))


def _atlassian(rng: random.Random) -> str:
    # ATATT3 and 186 characters: a base64url body, "=", and an 8-digit upper-case hex check.
    return "ATATT3xFfGF0" + _fake(rng, URLSAFE, 171) + "=" + _fake(rng, "0123456789ABCDEF", 8)


def _prefixed(
    prefixes: Iterable[str], alphabet: str, n: int | tuple[int, int]
) -> Callable[[random.Random], str]:
    choices = tuple(prefixes)

    def make(rng: random.Random) -> str:
        length = n if isinstance(n, int) else rng.randint(*n)
        return rng.choice(choices) + _fake(rng, alphabet, length)

    return make


def _password(rng: random.Random) -> str:
    """A generated password or API secret: 16 to 32 letters and digits."""
    return _fake(rng, ALNUM, rng.randint(16, 32))


def _basic(rng: random.Random) -> str:
    user = rng.choice(["admin", "deploy", "ci-bot", "svc_backup", "alice@example.com"])
    return base64.b64encode(f"{user}:{_password(rng)}".encode()).decode()


def _opaque(rng: random.Random) -> str:
    """An opaque bearer token: 32 to 64 characters of base64url, sometimes dotted."""
    token = _fake(rng, URLSAFE, rng.randint(32, 64))
    return token if rng.random() < 0.7 else f"{token[:20]}.{token[20:]}"


LOWER_ALNUM = string.ascii_lowercase + string.digits
NARROW = (HEX, LOWER_ALNUM, string.ascii_lowercase)
"""The alphabets a narrow body is written in: hex, lower case and digits, lower case."""
# (prefix, body length or range): formats whose prefix alone names the kind
NARROW_FORMATS: tuple[tuple[str, int | tuple[int, int]], ...] = (
    ("ghp_", 36),
    ("gho_", 36),
    ("ghs_", 36),
    ("ghr_", (36, 76)),
    ("npm_", 36),
    ("AIza", 35),
    ("glpat-", 20),
    ("dckr_pat_", 27),
    ("HRKU-AA", 58),
    ("ATATT3xFfGF0", (100, 180)),
)


def _narrow(rng: random.Random, prefix: str, n: int | tuple[int, int]) -> str:
    length = n if isinstance(n, int) else rng.randint(*n)
    return prefix + _fake(rng, rng.choice(NARROW), length)


def _narrow_token(rng: random.Random) -> str:
    if rng.random() < 0.15:  # a fine-grained GitHub token: two parts
        alphabet = rng.choice(NARROW)
        return f"github_pat_{_fake(rng, alphabet, 22)}_{_fake(rng, alphabet, 59)}"
    return _narrow(rng, *rng.choice(NARROW_FORMATS))


def _narrow_pypi(rng: random.Random) -> str:
    prefix = rng.choice(["pypi-AgEIcHlwaS5vcmc", "pypi-AgENdGVzdC5weXBpLm9yZw"])
    return _narrow(rng, prefix, (50, 160))


def _narrow_stripe(rng: random.Random) -> str:
    prefix = f"{rng.choice(['sk', 'rk'])}_{rng.choice(['live', 'test', 'prod'])}_"
    return _narrow(rng, prefix, (10, 99))


SHELL_PASSWORD = ALNUM + "$!@#%^*~-_+=."


def _shell_password(rng: random.Random) -> str:
    """A password a person typed into a shell: letters, digits and ``$!@#%^*~-_+=.``, holding
    a ``$`` or a ``!`` (no ``${`` or ``$(``: those are the shell's)."""
    while True:
        value = _fake(rng, SHELL_PASSWORD, rng.randint(16, 24))
        if ("$" in value or "!" in value) and "${" not in value and "$(" not in value:
            return value


def _header_value(rng: random.Random) -> str:
    """What stands in a custom token header: hex, a UUID, or letters and digits."""
    shape = rng.randrange(4)
    if shape == 0:
        return _fake(rng, HEX, rng.choice([16, 24, 32, 40]))
    if shape == 1:
        return str(uuid.UUID(int=rng.getrandbits(128), version=4))
    if shape == 2:
        return _fake(rng, LOWER_ALNUM, rng.randint(16, 32))
    return _fake(rng, ALNUM, rng.randint(16, 40))


# Words a person builds a password from (none of them a placeholder word: changeme, secret).
PASSWORD_WORDS = (
    *("maple", "river", "copper", "falcon", "orbit", "velvet", "harbor", "cobalt", "zephyr"),
    *("lantern", "tundra", "meadow", "quartz", "saffron", "juniper", "marble", "canyon"),
    *("ember", "glacier", "willow", "pepper", "comet", "bramble", "mosaic", "otter"),
)
TYPED_SYMBOLS = "!@#%^*+=.~_-"
_LEET_OF = str.maketrans("aeio", "4310")


def _typed_password(rng: random.Random, *, hyphens: bool = True) -> str:
    """A password a person types, 16 characters or more: words with digits and a symbol, a
    word in l33t, words joined by ``-``, or a mix of letters, digits and symbols."""
    while True:
        shape = rng.randrange(4 if hyphens else 3)
        if shape == 0:
            words = "".join(rng.choice(PASSWORD_WORDS).capitalize() for _ in range(2))
            value = words + str(rng.randint(10, 9999)) + rng.choice(TYPED_SYMBOLS)
        elif shape == 1:
            word = rng.choice(PASSWORD_WORDS).translate(_LEET_OF).capitalize()
            value = word + rng.choice(TYPED_SYMBOLS) + str(rng.randint(100, 99999)) + word[::-1]
        elif shape == 2:
            value = _fake(rng, ALNUM + TYPED_SYMBOLS, rng.randint(16, 24))
        else:
            words = [rng.choice(PASSWORD_WORDS) for _ in range(rng.randint(2, 3))]
            value = "-".join(words) + "-" + str(rng.randint(10, 9999))
        if len(value) >= 16:
            return value


def _account_key(rng: random.Random) -> str:
    """An Azure Storage account key: 64 random bytes in base64 (88 characters)."""
    return base64.b64encode(rng.randbytes(64)).decode()


def _sas_signature(rng: random.Random) -> str:
    """A SAS signature, HMAC-SHA256 in base64, URL-encoded as it stands in a query string."""
    raw = base64.b64encode(rng.randbytes(32)).decode()
    return urllib.parse.quote(raw, safe="")


MAKERS: dict[str, Callable[[random.Random], str]] = {
    "private-key": _pem,
    "aws-access-key-id": _aws_key_id,
    "aws-secret-access-key": lambda rng: _fake(rng, B64, 40),
    "github-pat": _prefixed(["ghp_"], ALNUM, 36),
    "github-oauth": _prefixed(["gho_"], ALNUM, 36),
    "github-app-token": _prefixed(["ghu_", "ghs_"], ALNUM, 36),
    "github-refresh-token": _prefixed(["ghr_"], ALNUM, (36, 76)),
    "github-fine-grained-pat": _fine_grained,
    "anthropic-api-key": lambda rng: f"sk-ant-api03-{_fake(rng, URLSAFE, 93)}AA",
    "anthropic-admin-key": lambda rng: f"sk-ant-admin01-{_fake(rng, URLSAFE, 93)}AA",
    "openai-api-key": _openai,
    "slack-token": _slack_token,
    "slack-webhook-url": _slack_webhook,
    "gcp-api-key": _prefixed(["AIza"], URLSAFE, 35),
    "jwt": _jwt,
    "url-password": _password,
    "bearer-token": _opaque,
    "basic-auth": _basic,
    "generic-secret": _password,
    "npm-token": _prefixed(["npm_"], ALNUM, 36),
    "pypi-token": _prefixed(["pypi-AgEIcHlwaS5vcmc"], URLSAFE, (120, 190)),
    "stripe-secret-key": _prefixed(["sk_live_", "sk_test_"], ALNUM, (24, 99)),
    "stripe-restricted-key": _prefixed(["rk_live_", "rk_test_"], ALNUM, (24, 99)),
    "huggingface-token": _prefixed(["hf_"], LETTERS, 34),
    "huggingface-org-token": _prefixed(["api_org_"], LETTERS, 34),
    "gitlab-pat": _prefixed(["glpat-"], URLSAFE, 20),
    "gitlab-pipeline-trigger-token": _prefixed(["glptt-"], HEX, 40),
    "gitlab-runner-token": _prefixed(["GR1348941"], URLSAFE, 20),
    "gitlab-deploy-token": _prefixed(["gldt-"], URLSAFE, 20),
    "azure-ad-client-secret": _azure,
    "dockerhub-pat": _prefixed(["dckr_pat_"], URLSAFE, 27),
    "digitalocean-token": _prefixed(["dop_v1_", "doo_v1_", "dor_v1_"], HEX, 64),
    "twilio-api-key": _prefixed(["SK"], HEX, 32),
    "sendgrid-api-key": lambda rng: f"SG.{_fake(rng, URLSAFE, 22)}.{_fake(rng, URLSAFE, 43)}",
    "shopify-token": _prefixed(["shpat_", "shpca_", "shppa_", "shpss_"], HEX, 32),
    "atlassian-api-token": _atlassian,
    "databricks-token": _prefixed(["dapi"], HEX, 32),
    "heroku-api-key": _prefixed(["HRKU-AA"], URLSAFE, 58),
    "generic-secret/new-syntax": _password,
    "slack-webhook-url/no-scheme": functools.partial(_slack_webhook, scheme=""),
    "token/narrow-body": _narrow_token,
    "pypi-token/narrow-body": _narrow_pypi,
    "stripe-key/narrow-body": _narrow_stripe,
    "curl-user-password/shell": _shell_password,
    "token-header/custom": _header_value,
    "password-variable": _typed_password,
    "command-line-password": _typed_password,
    "azure-storage-key": _account_key,
    "azure-sas-signature": _sas_signature,
    "prose-password": functools.partial(_typed_password, hyphens=False),
}


# --- contexts ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Names:
    """How a kind's secret is named where it is assigned."""

    env: str  # GITHUB_TOKEN
    key: str  # github_token
    camel: str  # githubToken
    extra: Mapping[str, str] = field(default_factory=dict)  # context -> template with {v}


Template = Callable[[Names, str], str]


def _json_escaped(output: str) -> str:
    """A tool's output dumped as JSON: the sample sits in a JSON string after a ``\\n``."""
    return json.dumps({"tool": "bash", "exit_code": 0, "output": output})


def _uri(value: str) -> str:
    return urllib.parse.quote(value, safe=URI_SAFE)


TOKEN_CONTEXTS: dict[str, Template] = {
    "prose": lambda n, v: f"I pasted {v} into the chat by mistake; please rotate it today.",
    "log": lambda n, v: f"2024-05-14T09:12:44Z INFO  client: loaded {v} from the keychain",
    "shell-export": lambda n, v: f"export {n.env}={v}",
    "dotenv": lambda n, v: f"{n.env}={v}\nLOG_LEVEL=info\n",
    "json": lambda n, v: json.dumps({n.key: v, "region": "eu-west-1"}),
    "yaml": lambda n, v: f"{n.key}: {v}\nretries: 3\n",
    "python": lambda n, v: f'{n.key} = "{v}"\nclient = Client({n.key})',
    "json-escaped": lambda n, v: _json_escaped(f"$ ./configure\nloaded config\n{v}\n"),
    "url-encoded-space": lambda n, v: f"GET /search?q=deploy%20{_uri(v)}&page=2 HTTP/1.1",
    "url-encoded-assign": lambda n, v: f"POST /hooks body=cfg%3Dprod%26key%3D{_uri(v)}%26v%3D2",
    "xml": lambda n, v: f'<settings>\n  <entry name="{n.env}">{v}</entry>\n</settings>',
    "makefile": lambda n, v: f"{n.env} := {v}\n\ndeploy:\n\t./release.sh\n",
    "toml": lambda n, v: f'[service]\n{n.key} = "{v}"\ntimeout = 30\n',
    "markdown": lambda n, v: f"| env | value |\n|-----|-------|\n| prod | `{v}` |\n",
    "docker-env": lambda n, v: f"docker run --rm -e {n.env}={v} app:latest",
    "go": lambda n, v: f'const {n.camel} = "{v}"',
}


def _indent(text: str, by: str) -> str:
    return "\n".join(by + line for line in text.splitlines())


PEM_CONTEXTS: dict[str, Template] = {
    "prose": lambda n, v: f"Here is the deploy key, keep it safe:\n\n{v}\n\nthanks",
    "log": lambda n, v: f"2024-05-14T09:12:44Z ERROR ssh: could not load key\n{v}\n",
    "shell-export": lambda n, v: f'export {n.env}="{v}"',
    "dotenv": lambda n, v: f'{n.env}="{v.replace(chr(10), chr(92) + "n")}"\nDEBUG=0\n',
    "json": lambda n, v: json.dumps({"type": "service_account", n.key: v}),
    "yaml": lambda n, v: f"{n.key}: |\n{_indent(v, '  ')}\nuser: deploy\n",
    "python": lambda n, v: f'{n.env} = """{v}"""',
    "json-escaped": lambda n, v: _json_escaped(f"$ cat ~/.ssh/id_rsa\n{v}\n"),
    # A documented limit: a URL-encoded PEM block (encodeURI: spaces and line breaks escaped).
    "url-encoded": lambda n, v: f"POST /keys body=name%3Ddeploy%26key%3D{_uri(v)}",
    "xml": lambda n, v: f"<credentials>\n<privateKey>{v}</privateKey>\n</credentials>",
    "makefile": lambda n, v: f"define {n.env}\n{v}\nendef\nexport {n.env}\n",
    "toml": lambda n, v: f'[ssh]\n{n.key} = """\n{v}\n"""\n',
    "markdown": lambda n, v: f"The key:\n\n```\n{v}\n```\n",
    "kubernetes": lambda n, v: f"kind: Secret\nstringData:\n  id_rsa: |\n{_indent(v, '    ')}\n",
    "go": lambda n, v: f"var {n.camel} = []byte(`{v}`)",
    "terraform": lambda n, v: f"private_key = <<EOT\n{v}\nEOT\n",
}

AWS_SECRET_CONTEXTS: dict[str, Template] = {
    "prose": lambda n, v: f"I set aws_secret_access_key={v} in the profile and it works now.",
    "log": lambda n, v: f"DEBUG botocore.credentials: aws_secret_access_key: {v} (env)",
    "shell-export": lambda n, v: f"export AWS_SECRET_ACCESS_KEY={v}",
    "dotenv": lambda n, v: f"AWS_REGION=eu-west-1\nAWS_SECRET_ACCESS_KEY={v}\n",
    "json": lambda n, v: json.dumps({"SecretAccessKey": v, "Expiration": "2030-01-01T00:00Z"}),
    "yaml": lambda n, v: f"aws:\n  aws_secret_access_key: {v}\n",
    "python": lambda n, v: f'boto3.client("s3", aws_secret_access_key="{v}")',
    "ini": lambda n, v: f"[default]\naws_secret_access_key = {v}\nregion = eu-west-1\n",
    "json-escaped": lambda n, v: _json_escaped(f"$ cat ~/.aws/credentials\naws_secret_key={v}\n"),
    "url-encoded-assign": lambda n, v: f"GET /debug?env=AWS_SECRET_ACCESS_KEY%3D{v}%26x%3D1",
    "url-encoded-json": lambda n, v: f"?q=%22SecretAccessKey%22%3A%22{v}%22",
    "xml": lambda n, v: f'<credentials aws_secret_access_key="{v}" />',
    "makefile": lambda n, v: f"AWS_SECRET_ACCESS_KEY := {v}\n",
    "terraform": lambda n, v: f'provider "aws" {{\n  secret_key = "{v}"\n}}',
    "docker-env": lambda n, v: f"docker run -e AWS_SECRET_ACCESS_KEY={v} amazon/aws-cli s3 ls",
    "ruby": lambda n, v: f"Aws.config.update(secret_access_key: '{v}', region: 'eu-west-1')",
}

URL_PASSWORD_CONTEXTS: dict[str, Template] = {
    "prose": lambda n, v: f"The staging DB is postgres://app:{v}@db.internal:5432/app for now.",
    "log": lambda n, v: f"INFO  engine: connecting to mysql+pymysql://svc:{v}@10.0.3.7:3306/orders",
    "shell-export": lambda n, v: f"export DATABASE_URL=postgres://app:{v}@db:5432/app",
    "dotenv": lambda n, v: f"REDIS_URL=redis://:{v}@cache:6379/0\n",
    "json": lambda n, v: json.dumps({"dsn": f"mongodb+srv://reader:{v}@cluster0.example.net/db"}),
    "yaml": lambda n, v: f"broker_url: amqp://worker:{v}@rabbit:5672/\n",
    "python": lambda n, v: f'engine = create_engine("postgresql://app:{v}@db/app")',
    "git": lambda n, v: f"git clone https://deploy:{v}@git.example.com/team/app.git",
    "json-escaped": lambda n, v: _json_escaped(f"$ env\nDATABASE_URL=postgres://u:{v}@db/x\n"),
    "url-encoded-space": lambda n, v: f"GET /search?q=dsn%20postgres://app:{v}@db/app&x=1",
    "url-encoded-assign": lambda n, v: f"GET /check?cfg=proxy%3Dhttp://bob:{v}@proxy:3128",
    "xml": lambda n, v: f"<dataSource>\n  <url>postgres://app:{v}@db/app</url>\n</dataSource>",
    "makefile": lambda n, v: f"DB_URL := postgres://app:{v}@localhost/app\n",
    "toml": lambda n, v: f'[database]\nurl = "postgres://app:{v}@db/app"\n',
    "docker-env": lambda n, v: f"docker run -e DATABASE_URL=mysql://root:{v}@db/app app",
    "pip": lambda n, v: f"pip install --index-url https://ci:{v}@pypi.example.com/simple pkg",
    "proxy": lambda n, v: f"export https_proxy=http://alice:{v}@proxy.corp:3128",
}

BEARER_CONTEXTS: dict[str, Template] = {
    "prose": lambda n, v: f"I sent Authorization: Bearer {v} and still got a 403.",
    "log": lambda n, v: f"DEBUG http: > Authorization: Bearer {v}",
    "shell-export": lambda n, v: f'export AUTH_HEADER="Authorization: Bearer {v}"',
    "dotenv": lambda n, v: f"UPSTREAM_AUTHORIZATION=Bearer {v}\n",
    "json": lambda n, v: json.dumps({"headers": {"Authorization": f"Bearer {v}"}}),
    "yaml": lambda n, v: f"headers:\n  Authorization: Bearer {v}\n",
    "python": lambda n, v: f'requests.get(url, headers={{"Authorization": "Bearer {v}"}})',
    "curl": lambda n, v: f"curl -H 'Authorization: Bearer {v}' https://api.example.com/v1/me",
    "json-escaped": lambda n, v: _json_escaped(f"> GET /v1/me\n> Authorization: Bearer {v}\n"),
    "url-encoded-space": lambda n, v: f"?h=Authorization%3A%20Bearer%20{v}&x=1",
    "url-encoded-assign": lambda n, v: f"?auth%3DBearer%20{v}%26x%3D1",
    "xml": lambda n, v: f'<header name="Authorization">Bearer {v}</header>',
    "http": lambda n, v: f"GET /v1/me HTTP/1.1\r\nHost: api\r\nAuthorization: Bearer {v}\r\n\r\n",
    "javascript": lambda n, v: f"fetch(url, {{ headers: {{ Authorization: 'Bearer {v}' }} }})",
    "go": lambda n, v: f'req.Header.Set("Authorization", "Bearer {v}")',
    "nginx": lambda n, v: f'proxy_set_header Authorization "Bearer {v}";',
    "wget": lambda n, v: f'wget --header="Authorization: Bearer {v}" https://api.example.com/x',
}

BASIC_CONTEXTS: dict[str, Template] = {
    "prose": lambda n, v: f"The proxy wants Authorization: Basic {v} on every call.",
    "log": lambda n, v: f"DEBUG http: > Authorization: Basic {v}",
    "shell-export": lambda n, v: f'export AUTH="Authorization: Basic {v}"',
    "dotenv": lambda n, v: f"PROXY_AUTHORIZATION=Basic {v}\n",
    "json": lambda n, v: json.dumps({"headers": {"Authorization": f"Basic {v}"}}),
    "yaml": lambda n, v: f"headers:\n  Authorization: Basic {v}\n",
    "python": lambda n, v: f'headers = {{"Authorization": "Basic {v}"}}',
    "curl": lambda n, v: f'curl -H "Authorization: Basic {v}" https://registry.example.com/v2/',
    "json-escaped": lambda n, v: _json_escaped(f"> GET /v2/\n> Authorization: Basic {v}\n"),
    "url-encoded-space": lambda n, v: f"?h=Authorization%3A%20Basic%20{v}&x=1",
    "url-encoded-assign": lambda n, v: f"?hdr=authorization%3DBasic%20{v}%26x%3D1",
    "xml": lambda n, v: f"<request>\n<headers>Authorization: Basic {v}</headers>\n</request>",
    "http": lambda n, v: f"GET /v2/ HTTP/1.1\r\nHost: registry\r\nAuthorization: Basic {v}\r\n",
    "javascript": lambda n, v: f"fetch(url, {{ headers: {{ Authorization: 'Basic {v}' }} }})",
    "wget": lambda n, v: f'wget --header="Authorization: Basic {v}" https://example.com/f',
    "powershell": lambda n, v: f'$headers = @{{ Authorization = "Basic {v}" }}',
    "makefile": lambda n, v: f"AUTH_HEADER := Authorization: Basic {v}\n",
}

GENERIC_CONTEXTS: dict[str, Template] = {
    "prose": lambda n, v: f"Log in as admin with password: {v} and change it afterwards.",
    "log": lambda n, v: f"2024-05-14 WARN db: connect failed user=app password={v} host=db",
    "shell-export": lambda n, v: f"export DB_PASSWORD={v}",
    "dotenv": lambda n, v: f"API_SECRET={v}\nPORT=8080\n",
    "json": lambda n, v: json.dumps({"apiKey": v, "endpoint": "https://api.example.com"}),
    "yaml": lambda n, v: f"oauth:\n  client_id: web\n  client_secret: {v}\n",
    "python": lambda n, v: f'db_password = "{v}"',
    "http-header": lambda n, v: f'curl -H "X-Auth-Token: {v}" https://api.example.com/v1',
    "json-escaped": lambda n, v: _json_escaped(f"$ cat .env\npassword={v}\n"),
    "url-encoded-space": lambda n, v: f"GET /search?q=login%20password:{v}&x=1",
    "url-encoded-assign": lambda n, v: f"GET /cb?next=%2Fcb%3Ftoken%3D{v}%26x%3D1",
    "xml": lambda n, v: (
        f"<connectionString>Server=db;Database=app;Password={v};</connectionString>"
    ),
    "makefile": lambda n, v: f"DB_PASSWORD = {v}\n",
    "toml": lambda n, v: f'[db]\npassword = "{v}"\n',
    "ruby": lambda n, v: f'config = {{ :password => "{v}" }}',
    "php": lambda n, v: f"$db_password = '{v}';",
    "cli-flag": lambda n, v: f"mysql --password {v} -h db.internal app",
    "docker-env": lambda n, v: f"docker run -e POSTGRES_PASSWORD={v} postgres:16",
    "javascript": lambda n, v: f'const apiSecret = "{v}";',
}

NEW_SYNTAX_CONTEXTS: dict[str, Template] = {
    "curl-user": lambda n, v: f"curl -u admin:{v} https://jenkins.example.com/api/json",
    "curl-user-long": lambda n, v: f"curl --user deploy:{v} -X POST https://ci.example.com/job",
    "authorization-token": lambda n, v: (
        f"curl -H 'Authorization: Token {v}' https://api.example.com"
    ),
    "x-api-key-header": lambda n, v: f"curl https://api.example.com -H 'X-Api-Key: {v}'",
    "xml-element": lambda n, v: (
        f"<datasource>\n  <user>app</user>\n  <password>{v}</password>\n</datasource>"
    ),
    "go-var": lambda n, v: f'var apiToken string = "{v}"',
    "php-append": lambda n, v: f"$token = '';\n$token .= '{v}';",
    "java-set-property": lambda n, v: f'System.setProperty("API_TOKEN", "{v}");',
    "makefile-conditional": lambda n, v: f"API_TOKEN ?= {v}\n",
    "makefile-posix": lambda n, v: f"DB_PASSWORD ::= {v}\n",
    "python-environ": lambda n, v: f'os.environ["API_TOKEN"] = "{v}"',
    "getenv-default": lambda n, v: f'token = getenv_or_default("api_token", "{v}")',
    "creds-keyword": lambda n, v: f"creds = {v}",
    # A value with "=" inside: the part before it must not pass for a type annotation.
    "yaml-value-with-equals": lambda n, v: f"db:\n  user: app\n  password: {v}={v[:-9:-1]}\n",
    "powershell-securestring": lambda n, v: (
        f'$pw = ConvertTo-SecureString "{v}" -AsPlainText -Force'
    ),
}


# curl -u with a password a person typed: quoted, mixed, after an empty user, on a continued
# line, --user, --proxy-user
CURL_CONTEXTS: dict[str, Template] = {
    "curl": lambda n, v: f"curl -u 'deploy:{v}' https://ci.example.com/api/json",
    "double-quoted": lambda n, v: f'curl -s -u "deploy:{v}" https://ci.example.com/api/json',
    "unquoted": lambda n, v: f"curl -fsS -u elastic:{v} https://localhost:9200/_cat/indices",
    "long-single": lambda n, v: (
        f"curl -X POST --user  'svc-backup:{v}' https://backup.example.com/run"
    ),
    "long-equals": lambda n, v: f'curl --user="j.smith@example.com:{v}" https://api.example.com/me',
    "empty-user": lambda n, v: f"curl -u ':{v}' https://api.example.com/v1/items",
    "empty-user-bare": lambda n, v: f"curl -u :{v} https://api.example.com/v1/items",
    "password-quoted": lambda n, v: f"curl --user kevin:'{v}' -iX PATCH https://api.example.com/x",
    "both-quoted": lambda n, v: (
        f'curl --user "ci-bot":"{v}" https://nexus.example.com/repository/raw/'
    ),
    "continued-line": lambda n, v: (
        "curl -sS -X POST https://ci.example.com/job/build \\\n"
        "  -H 'Accept: application/json' \\\n"
        f"  -u deploy:{v}"
    ),
    "proxy-user": lambda n, v: (
        f"curl -x http://proxy.corp:3128 --proxy-user 'alice:{v}' https://example.com/"
    ),
    "dockerfile": lambda n, v: (
        f'RUN curl -fsSL --user "ci:{v}" https://artifacts.example.com/app.tgz | tar xz'
    ),
    "json-escaped": lambda n, v: _json_escaped(f"$ curl -u 'deploy:{v}' https://ci/api\n200 OK\n"),
    "markdown": lambda n, v: f"Run:\n\n```sh\ncurl -u 'admin:{v}' https://ci.example.com/\n```\n",
    "cli": lambda n, v: f"history | grep curl\n  512  curl -u 'root:{v}' http://10.0.0.5:8080/",
}

# A credential in a header named for it: curl -H, HTTP dumps, curl -v, YAML and JSON header
# maps, code, wget, httpie, nginx
HEADER_CONTEXTS: dict[str, Template] = {
    "curl": lambda n, v: f"curl -H 'Token: {v}' https://api.example.com/v1/items",
    "curl-x-api-key": lambda n, v: f'curl --header "X-Api-Key: {v}" https://api.example.com/v2',
    "curl-private-token": lambda n, v: (
        f"curl --header 'PRIVATE-TOKEN: {v}' https://gitlab.example.com/api/v4/projects"
    ),
    "curl-x-auth-token": lambda n, v: f'curl -s -H "X-Auth-Token:{v}" https://api.example.com/',
    "curl-api-key": lambda n, v: f"curl -X GET -H 'Api-Key: {v}' https://api.example.com/stats",
    "curl-authorization-token": lambda n, v: (
        f"curl -H 'Authorization: Token {v}' https://api.example.com/use/635"
    ),
    "curl-authorization-bare": lambda n, v: f'curl -L -H "Authorization: {v}" service.local',
    "http": lambda n, v: (
        f"GET /api/v1/items HTTP/1.1\r\nHost: api.example.com\r\nX-Api-Key: {v}\r\n"
        "Accept: */*\r\n\r\n"
    ),
    "curl-verbose": lambda n, v: (
        f"> GET /v1/me HTTP/2\n> Host: api.example.com\n> token: {v}\n> user-agent: curl/8.5.0\n"
    ),
    "yaml": lambda n, v: f"headers:\n  X-Api-Key: {v}\n  Accept: application/json\n",
    "json": lambda n, v: json.dumps({"headers": {"Private-Token": v, "Accept": "*/*"}}),
    "python": lambda n, v: f'requests.get(url, headers={{"X-Auth-Token": "{v}"}})',
    "javascript": lambda n, v: f"fetch(url, {{ headers: {{ 'Api-Key': '{v}' }} }})",
    "go": lambda n, v: f'req.Header.Set("X-Api-Key", "{v}")',
    "wget": lambda n, v: f'wget --header="Token: {v}" https://files.example.com/report.csv',
    "vendor-header": lambda n, v: (
        f'curl -H "X-Vault-Token: {v}" https://vault.example.com:8200/v1/secret/data/app'
    ),
    "httpie": lambda n, v: f"http GET https://api.example.com/items X-Api-Key:{v}",
    "nginx": lambda n, v: f'proxy_set_header X-Api-Key "{v}";',
    "json-escaped": lambda n, v: _json_escaped(f"> GET /v1 HTTP/1.1\n> X-Api-Key: {v}\n"),
}


# A tool's password variable: a command's environment, export, .env, compose, CI, Kubernetes,
# Dockerfile, JSON, PowerShell, systemd
VARIABLE_CONTEXTS: dict[str, Template] = {
    "cli": lambda n, v: f"PGPASSWORD='{v}' psql -h db.internal -U app app",
    "shell-export": lambda n, v: f"export PGPASSWORD='{v}'",
    "dotenv": lambda n, v: f"DB_HOST=db.internal\nDB_PASS={v}\nDB_USER=app\n",
    "dotenv-glued": lambda n, v: f"DBHOST=db\nDBPASSWORD={v}\n",
    "pgpass-variable": lambda n, v: f"PGPASS='{v}' ./scripts/backup.sh nightly",
    "mysql-pwd": lambda n, v: f"MYSQL_PWD='{v}' mysqldump -u root shop > shop.sql",
    "redis": lambda n, v: f"REDISCLI_AUTH='{v}' redis-cli -h cache.internal ping",
    "sshpass-env": lambda n, v: f"SSHPASS='{v}' sshpass -e ssh deploy@10.0.0.5 uptime",
    "docker-env": lambda n, v: f"docker run -d -e 'MYSQL_ROOT_PASSWORD={v}' mysql:8",
    "compose": lambda n, v: (
        "services:\n  db:\n    image: postgres:16\n    environment:\n"
        f"      POSTGRES_PASSWORD: '{v}'\n"
    ),
    "kubernetes": lambda n, v: f'env:\n  - name: PGPASSWORD\n    value: "{v}"\n',
    "dockerfile": lambda n, v: f"FROM postgres:16\nENV PGPASSWORD {v}\n",
    "json": lambda n, v: json.dumps({"DB_PASS": v, "DB_HOST": "db.internal"}),
    "json-escaped": lambda n, v: _json_escaped(f"$ env | grep PG\nPGPASSWORD={v}\nPGUSER=app\n"),
    "powershell": lambda n, v: f'$env:PGPASSWORD = "{v}"; psql -h db -U app',
    "systemd": lambda n, v: f"[Service]\nEnvironment=PGPASSWORD={v}\nExecStart=/usr/bin/backup\n",
}

# A password on a command line: MySQL and MariaDB, Redis, sshpass, registry logins, htpasswd
COMMAND_CONTEXTS: dict[str, Template] = {
    "cli": lambda n, v: f"mysql -h db.internal -u root -p'{v}' shop",
    "mysqldump": lambda n, v: f"mysqldump -uroot -p'{v}' --all-databases > all.sql",
    "mariadb": lambda n, v: f'mariadb -h db -u app -p"{v}" -e "select 1"',
    "mysql-long": lambda n, v: f"mysql --user=app --password='{v}' shop < dump.sql",
    "docker-exec": lambda n, v: f"docker exec -i db mysql -uroot -p'{v}' shop < seed.sql",
    "redis-cli": lambda n, v: f"redis-cli -h cache -p 6379 -a '{v}' --no-auth-warning ping",
    "redis-pass": lambda n, v: f"redis-cli --pass '{v}' info replication",
    "redis-conf": lambda n, v: f"bind 0.0.0.0\nrequirepass {v}\nmaxmemory 2gb\n",
    "redis-server": lambda n, v: f"redis-server --port 6380 --requirepass '{v}'",
    "sshpass": lambda n, v: f"sshpass -p '{v}' ssh -o StrictHostKeyChecking=no deploy@10.0.0.5",
    "sshpass-scp": lambda n, v: f"sshpass -p'{v}' scp dist/app.tgz deploy@10.0.0.5:/srv/",
    "docker-login": lambda n, v: f"docker login -u ci -p '{v}' registry.example.com",
    "docker-login-long": lambda n, v: f"docker login --username ci --password '{v}' ghcr.io",
    "podman-login": lambda n, v: f"podman login -u ci -p '{v}' quay.io",
    "helm-login": lambda n, v: f"helm registry login reg.example.com -u ci --password='{v}'",
    "htpasswd": lambda n, v: f"htpasswd -bc /etc/nginx/.htpasswd admin '{v}'",
    "htpasswd-print": lambda n, v: f"htpasswd -nbB admin '{v}' >> users.htpasswd",
    "continued-line": lambda n, v: f"mysql \\\n  -h db.internal \\\n  -u root \\\n  -p'{v}' shop",
    "json-escaped": lambda n, v: _json_escaped(
        f"$ history | tail -1\n  88  mysql -u root -p'{v}'\n"
    ),
    "markdown": lambda n, v: f"Connect with:\n\n```sh\nredis-cli -a '{v}' -h cache\n```\n",
}

ACCOUNT = (
    "DefaultEndpointsProtocol=https;AccountName=shopdata;AccountKey={v};"
    "EndpointSuffix=core.windows.net"
)
AZURE_KEY_CONTEXTS: dict[str, Template] = {
    "dotenv": lambda n, v: "AZURE_STORAGE_CONNECTION_STRING=" + ACCOUNT.format(v=v) + "\n",
    "json": lambda n, v: json.dumps({"ConnectionStrings": {"Storage": ACCOUNT.format(v=v)}}),
    "yaml": lambda n, v: f'storage:\n  connection_string: "{ACCOUNT.format(v=v)}"\n',
    "python": lambda n, v: (
        f'client = BlobServiceClient.from_connection_string("{ACCOUNT.format(v=v)}")'
    ),
    "csharp": lambda n, v: f'var conn = "{ACCOUNT.format(v=v)}";',
    "shell-export": lambda n, v: f"export AZURE_STORAGE_KEY='{v}'",
    "access-key-variable": lambda n, v: (
        f"AZURE_STORAGE_ACCESS_KEY={v}\nAZURE_STORAGE_ACCOUNT=shopdata\n"
    ),
    "cli": lambda n, v: f"az storage blob list --account-name shopdata --account-key {v} -c logs",
    "log": lambda n, v: f"2024-05-14 ERROR storage: cannot connect with {ACCOUNT.format(v=v)}",
    "json-escaped": lambda n, v: _json_escaped(f"$ cat appsettings.json\n{ACCOUNT.format(v=v)}\n"),
    "xml": lambda n, v: f'<add name="Storage" connectionString="{ACCOUNT.format(v=v)}" />',
    "terraform": lambda n, v: f'resource "x" "y" {{\n  storage_account_key = "{v}"\n}}',
    "markdown": lambda n, v: f"Set `AccountKey={v}` in the connection string.",
}

SAS_QUERY = "sv=2022-11-02&ss=b&srt=co&sp=rl&se=2030-01-01T00:00:00Z&spr=https&sig={v}"
BLOB = "https://shopdata.blob.core.windows.net/logs/app.log?"
SAS_CONTEXTS: dict[str, Template] = {
    "prose": lambda n, v: f"Download it from {BLOB}{SAS_QUERY.format(v=v)} before Friday.",
    "curl": lambda n, v: f"curl -fsSL '{BLOB}{SAS_QUERY.format(v=v)}' -o app.log",
    "azcopy": lambda n, v: f'azcopy copy "{BLOB}{SAS_QUERY.format(v=v)}" ./app.log',
    "dotenv": lambda n, v: f'AZURE_SAS_TOKEN="?{SAS_QUERY.format(v=v)}"\n',
    "connection-string": lambda n, v: (
        f"BlobEndpoint=https://shopdata.blob.core.windows.net/;SharedAccessSignature={SAS_QUERY.format(v=v)}"
    ),
    "json": lambda n, v: json.dumps({"url": BLOB + SAS_QUERY.format(v=v)}),
    "yaml": lambda n, v: f"source:\n  url: {BLOB}{SAS_QUERY.format(v=v)}\n",
    "python": lambda n, v: f'blob = BlobClient.from_blob_url("{BLOB}{SAS_QUERY.format(v=v)}")',
    "log": lambda n, v: f"INFO  GET {BLOB}{SAS_QUERY.format(v=v)} 200 (1.2 MB)",
    "json-escaped": lambda n, v: _json_escaped(f"$ echo $SAS_URL\n{BLOB}{SAS_QUERY.format(v=v)}\n"),
    "markdown": lambda n, v: f"[logs]({BLOB}{SAS_QUERY.format(v=v)})",
    "powershell": lambda n, v: (
        f'Invoke-WebRequest -Uri "{BLOB}{SAS_QUERY.format(v=v)}" -OutFile app.log'
    ),
}

# A password a sentence names: chat, notes, logs, a transcript
PROSE_CONTEXTS: dict[str, Template] = {
    "prose": lambda n, v: f"The staging database password is {v}, please rotate it after the demo.",
    "note": lambda n, v: f"db creds for the demo: user app, pw: {v}",
    "root": lambda n, v: f"The root password for db-1 is {v} until Friday.",
    "was": lambda n, v: f"My password was {v} but I changed it this morning.",
    "quoted": lambda n, v: f"the admin password is '{v}' (do not share)",
    "log": lambda n, v: f"2024-05-14 INFO  reset done, new password is {v}",
    "markdown": lambda n, v: f"- host: db.internal\n- password is `{v}`\n",
    "passphrase": lambda n, v: f"The key's passphrase is {v}.",
    "wifi": lambda n, v: f"Guest Wi-Fi: office-guest, password is {v}",
    "pw-upper": lambda n, v: f"Login: admin / PW: {v}",
    "pass-colon": lambda n, v: f"vpn user: jdoe; pass: {v}",
    "json-escaped": lambda n, v: _json_escaped(f"assistant: the password is {v}\nuser: thanks\n"),
    "email": lambda n, v: f"Hi Sam,\n\nyour temporary password is {v}. Change it at first login.\n",
}


def _token_names(env: str, **extra: str) -> Names:
    key = env.lower()
    head, *rest = key.split("_")
    return Names(env, key, head + "".join(w.title() for w in rest), extra)


NAMES: dict[str, Names] = {
    "private-key": _token_names("SSH_PRIVATE_KEY"),
    "aws-access-key-id": _token_names(
        "AWS_ACCESS_KEY_ID", cli="aws configure set aws_access_key_id {v}"
    ),
    "aws-secret-access-key": _token_names("AWS_SECRET_ACCESS_KEY"),
    "github-pat": _token_names(
        "GITHUB_TOKEN",
        **{
            "http-header": 'curl -H "Authorization: token {v}" https://api.github.com/user',
            "git-remote": "git remote set-url origin https://{v}@github.com/org/repo.git",
        },
    ),
    "github-oauth": _token_names(
        "GH_OAUTH_TOKEN",
        **{"http-header": 'curl -H "Authorization: token {v}" https://api.github.com/user'},
    ),
    "github-app-token": _token_names(
        "GH_INSTALLATION_TOKEN",
        **{"http-header": 'curl -H "Authorization: Bearer {v}" https://api.github.com/repos/o/r'},
    ),
    "github-refresh-token": _token_names(
        "GH_REFRESH_TOKEN", **{"http-body": "grant_type=refresh_token&refresh_token={v}"}
    ),
    "github-fine-grained-pat": _token_names(
        "GH_PAT", **{"http-header": 'curl -H "Authorization: token {v}" https://api.github.com'}
    ),
    "anthropic-api-key": _token_names(
        "ANTHROPIC_API_KEY",
        **{"http-header": "curl https://api.anthropic.com/v1/messages -H 'x-api-key: {v}'"},
    ),
    "anthropic-admin-key": _token_names(
        "ANTHROPIC_ADMIN_KEY",
        **{"http-header": "curl https://api.anthropic.com/v1/organizations -H 'x-api-key: {v}'"},
    ),
    "openai-api-key": _token_names(
        "OPENAI_API_KEY",
        **{"http-header": 'curl https://api.openai.com/v1/models -H "Authorization: Bearer {v}"'},
    ),
    "slack-token": _token_names(
        "SLACK_BOT_TOKEN",
        **{"http-header": 'curl -H "Authorization: Bearer {v}" https://slack.com/api/auth.test'},
    ),
    "slack-webhook-url": _token_names(
        "SLACK_WEBHOOK_URL",
        **{"http-post": "curl -X POST -H 'Content-type: application/json' --data '{{}}' {v}"},
    ),
    "gcp-api-key": _token_names(
        "GOOGLE_API_KEY",
        **{"http-query": "curl 'https://maps.googleapis.com/maps/api/geocode/json?key={v}'"},
    ),
    "jwt": _token_names(
        "SESSION_JWT",
        **{
            "http-header": "Authorization: Bearer {v}",
            "cookie": "Cookie: session={v}; theme=dark",
        },
    ),
    "url-password": _token_names("DATABASE_URL"),
    "bearer-token": _token_names("AUTH_HEADER"),
    "basic-auth": _token_names("AUTH_HEADER"),
    "generic-secret": _token_names("DB_PASSWORD"),
    "npm-token": _token_names("NPM_TOKEN", npmrc="//registry.npmjs.org/:_authToken={v}"),
    "pypi-token": _token_names(
        "TWINE_PASSWORD",
        cli="twine upload -u __token__ -p {v} dist/*",
        pypirc="[pypi]\nusername = __token__\npassword = {v}\n",
    ),
    "stripe-secret-key": _token_names(
        "STRIPE_SECRET_KEY", cli="curl https://api.stripe.com/v1/charges -u {v}:"
    ),
    "stripe-restricted-key": _token_names(
        "STRIPE_RESTRICTED_KEY", cli="curl https://api.stripe.com/v1/customers -u {v}:"
    ),
    "huggingface-token": _token_names(
        "HF_TOKEN",
        cli="huggingface-cli login --token {v}",
        **{"http-header": 'curl -H "Authorization: Bearer {v}" https://huggingface.co/api/x'},
    ),
    "huggingface-org-token": _token_names(
        "HF_ORG_TOKEN",
        **{"http-header": 'curl -H "Authorization: Bearer {v}" https://huggingface.co/api/x'},
    ),
    "gitlab-pat": _token_names(
        "GITLAB_TOKEN",
        **{"http-header": 'curl --header "PRIVATE-TOKEN: {v}" https://gitlab.example.com/api/v4'},
    ),
    "gitlab-pipeline-trigger-token": _token_names(
        "TRIGGER_TOKEN",
        cli="curl -X POST -F token={v} -F ref=main https://gitlab.example.com/api/v4/trigger",
    ),
    "gitlab-runner-token": _token_names(
        "REGISTRATION_TOKEN",
        cli="gitlab-runner register --url https://gitlab.example.com --registration-token {v}",
    ),
    "gitlab-deploy-token": _token_names(
        "CI_DEPLOY_PASSWORD",
        cli="docker login registry.example.com -u gitlab+deploy-token-12 -p {v}",
    ),
    "azure-ad-client-secret": _token_names(
        "AZURE_CLIENT_SECRET",
        cli="az login --service-principal -u 5f0c7a52-1c2e-4f11-9d0a-3b7c2e8d9f10 -p {v} "
        "--tenant contoso.onmicrosoft.com",
    ),
    "dockerhub-pat": _token_names(
        "DOCKERHUB_TOKEN", cli="echo {v} | docker login -u builder --password-stdin"
    ),
    "digitalocean-token": _token_names(
        "DIGITALOCEAN_ACCESS_TOKEN", cli="doctl auth init --access-token {v}"
    ),
    "twilio-api-key": _token_names(
        "TWILIO_API_KEY", cli="curl https://api.twilio.com/2010-04-01/Accounts -u {v}:$SECRET"
    ),
    "sendgrid-api-key": _token_names(
        "SENDGRID_API_KEY",
        **{"http-header": 'curl -H "Authorization: Bearer {v}" https://api.sendgrid.com/v3/x'},
    ),
    "shopify-token": _token_names(
        "SHOPIFY_ACCESS_TOKEN",
        **{"http-header": 'curl -H "X-Shopify-Access-Token: {v}" https://s.myshopify.com/x'},
    ),
    "atlassian-api-token": _token_names(
        "JIRA_API_TOKEN", cli="curl -u me@example.com:{v} https://team.atlassian.net/rest/api/3"
    ),
    "databricks-token": _token_names(
        "DATABRICKS_TOKEN",
        databrickscfg="[DEFAULT]\nhost = https://adb-1.azuredatabricks.net\ntoken = {v}\n",
        **{"http-header": 'curl -H "Authorization: Bearer {v}" https://adb-1.net/api/2.0/x'},
    ),
    "heroku-api-key": _token_names(
        "HEROKU_API_KEY",
        netrc="machine api.heroku.com\n  login me@example.com\n  password {v}\n",
        **{"http-header": 'curl -H "Authorization: Bearer {v}" https://api.heroku.com/apps'},
    ),
    "generic-secret/new-syntax": _token_names("API_TOKEN"),
    "slack-webhook-url/no-scheme": _token_names("SLACK_WEBHOOK"),
    "token/narrow-body": _token_names("API_TOKEN"),
    "pypi-token/narrow-body": _token_names(
        "TWINE_PASSWORD",
        cli="twine upload -u __token__ -p {v} dist/*",
        pypirc="[pypi]\nusername = __token__\npassword = {v}\n",
    ),
    "stripe-key/narrow-body": _token_names(
        "STRIPE_SECRET_KEY", cli="curl https://api.stripe.com/v1/charges -u {v}:"
    ),
    "curl-user-password/shell": _token_names("CURL_PASSWORD"),
    "token-header/custom": _token_names("API_TOKEN"),
    "password-variable": _token_names("PGPASSWORD"),
    "command-line-password": _token_names("MYSQL_PASSWORD"),
    "azure-storage-key": _token_names("AZURE_STORAGE_KEY"),
    "azure-sas-signature": _token_names("AZURE_SAS_TOKEN"),
    "prose-password": _token_names("PASSWORD"),
}

FAMILY: dict[str, dict[str, Template]] = {
    "private-key": PEM_CONTEXTS,
    "aws-secret-access-key": AWS_SECRET_CONTEXTS,
    "url-password": URL_PASSWORD_CONTEXTS,
    "bearer-token": BEARER_CONTEXTS,
    "basic-auth": BASIC_CONTEXTS,
    "generic-secret": GENERIC_CONTEXTS,
    "generic-secret/new-syntax": NEW_SYNTAX_CONTEXTS,
    "curl-user-password/shell": CURL_CONTEXTS,
    "token-header/custom": HEADER_CONTEXTS,
    "password-variable": VARIABLE_CONTEXTS,
    "command-line-password": COMMAND_CONTEXTS,
    "azure-storage-key": AZURE_KEY_CONTEXTS,
    "azure-sas-signature": SAS_CONTEXTS,
    "prose-password": PROSE_CONTEXTS,
}
"""The contexts of each kind that is not a plain token (those use :data:`TOKEN_CONTEXTS`)."""


def contexts(kind: str) -> dict[str, Template]:
    """Every context of ``kind``: its family's, and its own extra ones (``Names.extra``)."""
    table = dict(FAMILY.get(kind, TOKEN_CONTEXTS))
    for name, template in NAMES[kind].extra.items():
        table[name] = lambda n, v, t=template: t.format(v=v)
    return table


# --- non-secrets ---------------------------------------------------------------------------

_UUID = str(uuid.UUID(int=_rng("uuid").getrandbits(128), version=4))
_SHA = _fake(_rng("sha"), HEX, 40)

PLACEHOLDERS: dict[str, tuple[str, ...]] = {
    "private-key": (
        "-----BEGIN RSA PRIVATE KEY-----\n...\n-----END RSA PRIVATE KEY-----",
        "<contents of ~/.ssh/id_ed25519>",
        "${SSH_PRIVATE_KEY}",
    ),
    "aws-access-key-id": ("AKIAXXXXXXXXXXXXXXXX", "AKIAIOSFODNN7EXAMPLE", "${AWS_ACCESS_KEY_ID}"),
    # The secret key below is the example AWS's own documentation prints next to its key id.
    "aws-secret-access-key": (
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "X" * 40,
        "${AWS_SECRET_ACCESS_KEY}",
    ),
    "github-pat": ("ghp_" + "x" * 36, "ghp_<your-token>", "${GITHUB_TOKEN}"),
    "github-oauth": ("gho_" + "X" * 36, "gho_...", "<oauth-token>"),
    "github-app-token": ("ghs_" + "x" * 36, "ghu_" + "0" * 36, "$GH_INSTALLATION_TOKEN"),
    "github-refresh-token": ("ghr_" + "x" * 36, "ghr_<refresh-token>", "${GH_REFRESH_TOKEN}"),
    "github-fine-grained-pat": ("github_pat_" + "x" * 82, "github_pat_...", "${GH_PAT}"),
    "anthropic-api-key": ("sk-ant-api03-" + "x" * 95, "sk-ant-...", "${ANTHROPIC_API_KEY}"),
    "anthropic-admin-key": ("sk-ant-admin01-" + "X" * 95, "sk-ant-admin01-...", "<admin-key>"),
    "openai-api-key": ("sk-proj-" + "x" * 48, "sk-" + "X" * 48, "sk-...", "${OPENAI_API_KEY}"),
    "slack-token": ("xoxb-your-bot-token", "xoxb-" + "x" * 40, "${SLACK_BOT_TOKEN}"),
    "slack-webhook-url": (
        "https://hooks.slack.com/services/T00000000/B00000000/" + "X" * 24,
        "https://hooks.slack.com/services/<team>/<bot>/<secret>",
        "${SLACK_WEBHOOK_URL}",
    ),
    "gcp-api-key": ("AIza" + "a" * 35, "AIza" + "X" * 35, "AIza...", "${GOOGLE_API_KEY}"),
    "jwt": ("eyJhbGciOi...", "<jwt>", "eyJ" + "x" * 20 + ".eyJ" + "x" * 20 + ".xxxx"),
    "url-password": ("${DB_PASSWORD}", "{password}", "<password>", "****"),
    "bearer-token": ("<token>", "${API_TOKEN}", "$TOKEN", "YOUR_ACCESS_TOKEN", "x" * 32),
    "basic-auth": ("<base64(user:password)>", "${BASIC_AUTH}", "$CREDENTIALS"),
    "generic-secret": ("<your-token>", "${API_TOKEN}", "changeme", "********", "aaaaaaaabbbbbbbb"),
    "npm-token": ("npm_" + "x" * 36, "npm_<token>", "${NPM_TOKEN}"),
    "pypi-token": ("pypi-AgEIcHlwaS5vcmc" + "x" * 60, "pypi-<your-token>", "${PYPI_TOKEN}"),
    "stripe-secret-key": ("sk_test_" + "x" * 24, "sk_live_" + "X" * 24, "sk_live_..."),
    "stripe-restricted-key": ("rk_test_" + "x" * 24, "rk_live_<key>", "${STRIPE_RK}"),
    "huggingface-token": ("hf_" + "x" * 34, "hf_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX", "hf_..."),
    "huggingface-org-token": ("api_org_" + "x" * 34, "api_org_<token>", "${HF_ORG_TOKEN}"),
    "gitlab-pat": ("glpat-" + "x" * 20, "glpat-XXXXXXXXXXXXXXXXXXXX", "glpat-<token>"),
    "gitlab-pipeline-trigger-token": ("glptt-" + "0" * 40, "glptt-<trigger-token>", "$TRIGGER"),
    "gitlab-runner-token": ("GR1348941" + "x" * 20, "GR1348941<token>", "${RUNNER_TOKEN}"),
    "gitlab-deploy-token": ("gldt-" + "X" * 20, "gldt-<token>", "${CI_DEPLOY_PASSWORD}"),
    "azure-ad-client-secret": ("xxx8Q~" + "x" * 34, "<client-secret>", "${AZURE_CLIENT_SECRET}"),
    "dockerhub-pat": ("dckr_pat_" + "x" * 27, "dckr_pat_<token>", "${DOCKERHUB_TOKEN}"),
    "digitalocean-token": ("dop_v1_" + "0" * 64, "dop_v1_<token>", "${DIGITALOCEAN_TOKEN}"),
    "twilio-api-key": ("SK" + "x" * 32, "SK" + "0" * 32, "SKXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX"),
    "sendgrid-api-key": ("SG." + "x" * 22 + "." + "x" * 43, "SG.<key>", "${SENDGRID_API_KEY}"),
    "shopify-token": ("shpat_" + "0" * 32, "shpat_<token>", "shpss_" + "x" * 32),
    "atlassian-api-token": ("ATATT3" + "x" * 186, "ATATT3...", "${JIRA_API_TOKEN}"),
    "databricks-token": ("dapi" + "0" * 32, "dapi<token>", "${DATABRICKS_TOKEN}"),
    "heroku-api-key": ("HRKU-" + "x" * 60, "HRKU-<key>", "${HEROKU_API_KEY}"),
    "generic-secret/new-syntax": ("$PASSWORD", "${API_TOKEN}", "changeme", "<secret>"),
    "slack-webhook-url/no-scheme": (
        "hooks.slack.com/services/T00000000/B00000000/" + "X" * 24,
        "hooks.slack.com/services/...",
        "hooks.slack.com/services/<path>",
    ),
    "token/narrow-body": (
        "ghp_" + "0123456789abcdef" * 2 + "0123",
        "npm_" + "deadbeef" * 4 + "dead",
        "glpat-" + "abcdefghijklmnopqrst",
        "AIza" + "x" * 35,
    ),
    "pypi-token/narrow-body": (
        "pypi-AgEIcHlwaS5vcmc" + "0" * 64,
        "pypi-AgEIcHlwaS5vcmc" + "0123456789abcdef" * 4,
        "pypi-AgEIcHlwaS5vcmc<token>",
    ),
    "stripe-key/narrow-body": (
        "sk_test_" + "abc123" * 5,
        "sk_test_yoursecretkeyhere",
        "rk_live_" + "x" * 24,
        "sk_live_1234567890",
    ),
    "curl-user-password/shell": ("$PASSWORD", "${CURL_PASSWORD}", "<password>", "changeme!"),
    "token-header/custom": (
        "$API_KEY",
        "${TOKEN}",
        "<your_access_token>",
        "YOUR_API_KEY",
        "********",
    ),
    "password-variable": ("$DB_PASSWORD", "${PGPASSWORD}", "<password>", "changeme", "postgres"),
    "command-line-password": ("$MYSQL_PASSWORD", "${REDIS_PASSWORD}", "<password>", "changeme"),
    "azure-storage-key": ("<your-account-key>", "${AZURE_STORAGE_KEY}", "x" * 86 + "=="),
    "azure-sas-signature": ("<signature>", "${SAS_SIGNATURE}", "xxxxxxxxxxxxxxxx"),
    "prose-password": ("<password>", "changeme", "${PASSWORD}", "********", "required"),
}
"""Placeholders of each kind's shape: documentation examples, masks, references."""

PLACEHOLDER_CONTEXTS = ("prose", "log", "dotenv", "json", "yaml", "python", "curl", "cli")
"""The contexts a placeholder is put in (those that a kind has)."""

# Ordinary values in the same places, which no redactor should touch: (kind, context, text).
ORDINARY: tuple[tuple[str, str, str], ...] = (
    ("private-key", "public-key", "-----BEGIN PUBLIC KEY-----\n" + _fake(_rng("pub"), B64, 64)),
    ("private-key", "ssh-public", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5" + _fake(_rng("ed"), B64, 48)),
    ("private-key", "prose", "The file must start with -----BEGIN OPENSSH PRIVATE KEY-----."),
    ("aws-access-key-id", "near-miss", "ASIAN markets opened lower; AKIA is a prefix, not a key."),
    ("aws-secret-access-key", "no-key", f"checksum: {_fake(_rng('b64'), B64, 40)}"),
    ("github-pat", "prose", "Classic tokens start with ghp_ and fine-grained with github_pat_."),
    ("openai-api-key", "near-miss", "risk-assessment and task-list-item and disk-usage-report"),
    ("slack-token", "near-miss", "the xoxb- prefix marks a bot token; xapp- an app token"),
    ("jwt", "header-only", "alg header eyJhbGciOiJIUzI1NiJ9 decodes to HS256"),
    ("url-password", "host-port", "redis_url: redis://cache.internal:6379/0"),
    ("url-password", "no-password", "git clone https://git@example.com/team/app.git"),
    ("url-password", "replica-set", "mongodb://mongo1:27017,mongo2:27017/app?replicaSet=rs0"),
    ("bearer-token", "prose", "The API uses bearer token authentication (RFC 6750)."),
    ("basic-auth", "challenge", 'WWW-Authenticate: Basic realm="Restricted Area"'),
    ("generic-secret", "credentials-id", f"git credentialsId: '{_UUID}', url: repo"),
    ("generic-secret", "jenkins-uuid", f"withCredentials([string(credentialsId: '{_UUID}')])"),
    ("generic-secret", "host-port", "auth_server: auth.internal:8443"),
    ("generic-secret", "resource-name", "secret: projects/my-proj/secrets/db-password/versions/2"),
    ("generic-secret", "secret-ref", "password_secret_ref = prod/db/password"),
    (
        "generic-secret",
        "csrf-field",
        f'<input type="hidden" name="csrf_token" value="{_fake(_rng("csrf"), URLSAFE, 43)}">',
    ),
    ("generic-secret", "csrf-form", f"csrfmiddlewaretoken={_fake(_rng('csrf2'), ALNUM, 64)}"),
    ("generic-secret", "commit-sha", f"commit {_SHA}\n\n    Rotate the deploy token"),
    ("generic-secret", "tokenizer-sha", f"tokenizer_revision: {_SHA}"),
    (
        "generic-secret",
        "base64-words",
        "auth_banner: " + base64.b64encode(b"Welcome to the staging cluster").decode(),
    ),
    ("generic-secret", "low-entropy", 'token = "1111111111111111"'),
    ("generic-secret", "repeated-word", "API_KEY=testtesttesttest"),
    ("generic-secret", "env-reference", "password: ${DB_PASSWORD}"),
    ("generic-secret", "env-dollar", "token=$GITHUB_TOKEN"),
    ("generic-secret", "environ", 'api_key = os.environ["OPENAI_API_KEY"]'),
    ("generic-secret", "template", "secret: {{ .Values.secret }}"),
    ("generic-secret", "windows-env", "password=%DB_PASSWORD%"),
    ("generic-secret", "name", 'api_key_env = "OPENAI_API_KEY"'),
    ("generic-secret", "numbers", "max_tokens: 4096"),
    ("generic-secret", "word", "tokenizer: cl100k_base"),
    ("npm-token", "near-miss", "npm_config_registry=https://registry.npmjs.org/"),
    ("pypi-token", "near-miss", "pypi-simple-index and pypi-AgEI... are documented"),
    ("stripe-secret-key", "prose", "Live keys start with sk_live_, test keys with sk_test_."),
    ("huggingface-token", "near-miss", "from huggingface_hub import hf_hub_download"),
    ("huggingface-org-token", "near-miss", "api_org_settings_endpoint = '/api/org/settings'"),
    ("gitlab-pat", "prose", "GitLab personal tokens start with glpat- since 14.5."),
    ("gitlab-runner-token", "prose", "registration tokens carry the GR1348941 prefix"),
    ("azure-ad-client-secret", "near-miss", "Q~ appears in client secrets after four characters"),
    ("digitalocean-token", "near-miss", "dop_v1_ is the prefix of personal access tokens"),
    ("twilio-api-key", "near-miss", f"SKU {_SHA[:32].upper()} is out of stock"),
    ("sendgrid-api-key", "near-miss", "see SG.com and docs.sendgrid.com for keys"),
    ("shopify-token", "near-miss", "shpat_ tokens belong to custom apps"),
    ("databricks-token", "near-miss", "dapiDataGetTopLongShortPositionRatio(params)"),
    ("heroku-api-key", "near-miss", "HRKU- keys replace the old UUID keys"),
    ("generic-secret/new-syntax", "curl-user-env", 'curl -u "$USER:$PASSWORD" https://ci/api'),
    ("generic-secret/new-syntax", "xml-element-ref", "<password>${DB_PASSWORD}</password>"),
    ("generic-secret/new-syntax", "go-getenv", 'var apiToken string = os.Getenv("API_TOKEN")'),
    (
        "generic-secret/new-syntax",
        "java-getenv",
        'System.setProperty("api.token", System.getenv("API_TOKEN"));',
    ),
    ("generic-secret/new-syntax", "makefile-default", "PASSWORD ?= changeme\n"),
    ("generic-secret/new-syntax", "environ-arg", 'os.environ["API_TOKEN"] = args.token'),
    ("generic-secret/new-syntax", "getenv-empty", 'token = getenv_or_default("api_token", "")'),
    ("generic-secret/new-syntax", "curl-user-only", "curl -u admin https://ci.example.com/api"),
    ("slack-webhook-url/no-scheme", "docs", "post to hooks.slack.com/services/ with your path"),
    ("token/narrow-body", "prose", "classic tokens start with ghp_, npm tokens with npm_"),
    ("token/narrow-body", "identifier", "from huggingface_hub import hf_hub_download, npm_package"),
    ("token/narrow-body", "commit-sha", f"ghp_rotation landed in {_SHA} (ghp_ prefix only)"),
    ("pypi-token/narrow-body", "prose", "pypi-AgEIcHlwaS5vcmc is base64 of the token's location"),
    ("pypi-token/narrow-body", "elided", "password = pypi-AgEIcHlwaS5vcmc…"),
    ("stripe-key/narrow-body", "prose", "Secret keys start with sk_live_ or sk_test_."),
    ("stripe-key/narrow-body", "identifier", "def test_sk_test_mode(): assert risk_live_feed"),
    ("stripe-key/narrow-body", "short", "set sk_test_key and rk_live_mode in the fixture"),
    ("stripe-key/narrow-body", "masked", "STRIPE_SECRET_KEY=sk_live_****************4242"),
    ("stripe-key/narrow-body", "task-name", "task_test_a1b2c3d4e5f6 and disk_live_0f9e8d7c6b5a"),
    ("curl-user-password/shell", "env-double", 'curl -u "$CI_USER:$CI_PASSWORD" https://ci/api'),
    ("curl-user-password/shell", "env-single", "curl --user '$USERNAME:$PASSWORD' https://ci/api"),
    ("curl-user-password/shell", "env-braces", 'curl -u "${user}:${pass}" https://ci/api'),
    ("curl-user-password/shell", "command", 'curl --user "$(cat u.txt):$(cat p.txt)" https://ci/'),
    (
        "curl-user-password/shell",
        "actions",
        'curl -u "${{ secrets.NEXUS_USER }}:${{ secrets.NEXUS_PASSWORD }}" https://nexus/',
    ),
    ("curl-user-password/shell", "angle", "curl -u <user>:<password> https://api.example.com"),
    ("curl-user-password/shell", "bracket", "curl --user neo4j:[PASSWORD] http://[IP]:7474/db"),
    ("curl-user-password/shell", "default", "curl -i -u 'admin:admin' http://localhost:8080"),
    ("curl-user-password/shell", "words", 'curl --user "username:password" https://example.com'),
    ("curl-user-password/shell", "empty", 'curl -u ":" https://localhost:9200'),
    ("curl-user-password/shell", "user-only", 'curl -u "jenkins" https://ci.example.com/api'),
    ("curl-user-password/shell", "docker", "docker run --rm -u 1000:1000 -v $PWD:/w app:latest"),
    ("curl-user-password/shell", "group", "install -o app -g staff; sudo -u app:staff ls"),
    ("token-header/custom", "env", 'curl -H "X-Api-Key: $API_KEY" https://api.example.com'),
    ("token-header/custom", "template", "headers:\n  X-Api-Key: {{ .Values.apiKey }}\n"),
    (
        "token-header/custom",
        "csrf",
        f"X-CSRF-Token: {_fake(_rng('csrf3'), URLSAFE, 43)}\r\nX-XSRF-TOKEN: {_SHA}",
    ),
    ("token-header/custom", "idempotency", f"Idempotency-Key: {_UUID}"),
    ("token-header/custom", "request-id", f"X-Request-Id: {_UUID}\r\nX-Trace-Id: {_SHA[:32]}"),
    ("token-header/custom", "websocket", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ=="),
    ("token-header/custom", "rate-limit", "X-RateLimit-Remaining: 4999\r\nRetry-After: 120"),
    ("token-header/custom", "page-token", f"X-Next-Page-Token: {_fake(_rng('page'), URLSAFE, 32)}"),
    ("token-header/custom", "word", "Token: required\nApi-Key: optional"),
    ("token-header/custom", "max-tokens", "max-tokens: 4096\nX-Token-Count: 128000"),
    (
        "password-variable",
        "file",
        "PGPASSFILE=~/.pgpass\nDB_PASSWORD_FILE=/run/secrets/db_password",
    ),
    ("password-variable", "flags", "MYSQL_ALLOW_EMPTY_PASSWORD=yes\nMYSQL_RANDOM_ROOT_PASSWORD=1"),
    ("password-variable", "command", "PGPASSWORD=$(vault kv get -field=password secret/db) psql"),
    ("password-variable", "expansion", 'SSHPASS="$DEPLOY_PW" sshpass -e ssh deploy@host'),
    ("password-variable", "default", 'PGPASSWORD="${PGPASSWORD:-}" pg_dump app'),
    ("password-variable", "names", "BYPASS_CACHE=true\nPASSWORD_MIN_LENGTH=12\nCOMPASS_URL=/x"),
    ("password-variable", "empty", "PGPASSWORD=\nPGUSER=app\n"),
    ("password-variable", "secrets-ref", "POSTGRES_PASSWORD: ${{ secrets.DB_PASSWORD }}"),
    ("command-line-password", "prompt", "mysql -u root -p shop\nmysql -h db -P 3306 -p"),
    ("command-line-password", "other-p", "mkdir -p /srv/app && cp -p a b && ssh -p 2222 deploy@h"),
    (
        "command-line-password",
        "ports",
        "docker run -p 8080:80 nginx\nredis-cli -h cache -p 6379 ping",
    ),
    ("command-line-password", "stdin", "echo $PW | docker login -u ci --password-stdin ghcr.io"),
    ("command-line-password", "htpasswd-prompt", "htpasswd -c /etc/nginx/.htpasswd admin"),
    ("command-line-password", "redis-example", "# requirepass foobared\nrequirepass $REDIS_PW"),
    ("command-line-password", "sshpass-file", "sshpass -f ~/.deploy_pw ssh deploy@10.0.0.5"),
    ("command-line-password", "pg-port", "pg_dump -p 5433 -U app app > app.sql"),
    ("azure-storage-key", "emulator", "UseDevelopmentStorage=true"),
    ("azure-storage-key", "no-key", "AccountName=shopdata;EndpointSuffix=core.windows.net"),
    ("azure-storage-key", "key-name", "SharedAccessKeyName=RootManageSharedAccessKey;Entity=q"),
    ("azure-storage-key", "list-keys", "az storage account keys list -g rg -n shopdata -o table"),
    ("azure-storage-key", "key-id", "storage_account_key_id: 1\naccount_key_name: key1"),
    ("azure-sas-signature", "empty", "https://x.blob.core.windows.net/c/b?sv=2022-11-02&sig="),
    ("azure-sas-signature", "short", "GET /img?w=200&sig=ab12cd34&h=100"),
    ("azure-sas-signature", "prose", "the sig= parameter of a SAS token carries its signature"),
    ("azure-sas-signature", "sha", f"https://cdn.example.com/a.js?sig={_SHA}"),
    (
        "prose-password",
        "required",
        "The password is required.\nthe password is incorrect, try again",
    ),
    ("prose-password", "stored", "Password is stored in Vault under kv/db; the password was reset"),
    (
        "prose-password",
        "length",
        "password is 8 characters or more; passwords are hashed with bcrypt",
    ),
    ("prose-password", "code", "pw = getpass.getpass()\npass: 3 of 4 checks passed"),
    ("prose-password", "env", "the password for root is set in the .env file"),
    ("prose-password", "compass", "The compass is north; bypass is open."),
)


def _secret_sample(kind: str, context: str, template: Template) -> Sample:
    rng = _rng(kind, context)
    value = MAKERS[kind](rng)
    text = template(NAMES[kind], value)
    pieces = pem_body(value) if kind == "private-key" else (value,)
    return Sample(kind, context, text, pieces)


def _truncated_pem() -> Sample:
    """A private key cut off before its END line (output truncated): the body must go too."""
    lines = _pem(_rng("private-key", "truncated")).splitlines()[:4]
    text = "$ head -c 300 id_rsa\n" + "\n".join(lines) + "\n"
    return Sample("private-key", "truncated", text, tuple(lines[1:]))


@functools.cache
def build() -> tuple[Sample, ...]:
    """The whole corpus: every kind's secret samples, then its non-secret samples."""
    samples: list[Sample] = []
    for kind in ALL_KINDS:
        table = contexts(kind)
        samples += (_secret_sample(kind, ctx, template) for ctx, template in table.items())
        if kind == "private-key":
            samples.append(_truncated_pem())
        for i, value in enumerate(PLACEHOLDERS[kind]):
            for ctx in PLACEHOLDER_CONTEXTS:
                if ctx in table:
                    text = table[ctx](NAMES[kind], value)
                    samples.append(Sample(kind, f"placeholder-{i}-{ctx}", text))
    samples += (Sample(kind, ctx, text) for kind, ctx, text in ORDINARY)
    return tuple(samples)


# --- scoring ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Score:
    """How a redactor did on some samples."""

    secrets: int = 0
    caught: int = 0
    non_secrets: int = 0
    alarms: int = 0
    misses: tuple[Sample, ...] = ()
    false_alarms: tuple[Sample, ...] = ()

    @property
    def recall(self) -> float:
        return self.caught / self.secrets if self.secrets else 1.0

    @property
    def false_alarm_rate(self) -> float:
        return self.alarms / self.non_secrets if self.non_secrets else 0.0

    def __add__(self, other: Score) -> Score:
        return Score(
            self.secrets + other.secrets,
            self.caught + other.caught,
            self.non_secrets + other.non_secrets,
            self.alarms + other.alarms,
            self.misses + other.misses,
            self.false_alarms + other.false_alarms,
        )


def judge(sample: Sample, redacted: str) -> Score:
    """A secret sample is caught when none of its secrets survives; a non-secret one raises a
    false alarm when its text changed."""
    if sample.is_secret:
        caught = not any(secret in redacted for secret in sample.secrets)
        return Score(1, int(caught), misses=() if caught else (sample,))
    alarm = redacted != sample.text
    return Score(non_secrets=1, alarms=int(alarm), false_alarms=(sample,) if alarm else ())


def score(results: Iterable[tuple[Sample, str]]) -> dict[str, Score]:
    """Per kind, the scores of (sample, its redacted text) pairs."""
    scores: dict[str, Score] = {}
    for sample, redacted in results:
        scores[sample.kind] = scores.get(sample.kind, Score()) + judge(sample, redacted)
    return scores


def evaluate(redact: Callable[[str], str], samples: Iterable[Sample]) -> dict[str, Score]:
    """Per kind, how ``redact`` did on ``samples``."""
    return score((sample, redact(sample.text)) for sample in samples)


def total(scores: Mapping[str, Score], kinds: Iterable[str]) -> Score:
    """The scores of ``kinds`` added up (each sample counts once)."""
    return sum((scores.get(kind, Score()) for kind in kinds), Score())
