"""clm_policy.memory.redact key/value rules: every assignment syntax read (exact output), curl
credentials, Authorization headers, what is not a secret, idempotence, linear time on long
adversarial inputs.

Every fake secret is generated here from a seeded random.Random; none is a real key.
"""

from __future__ import annotations

import json
import random
import string

import pytest

from clm_policy.memory.redact import Redaction, redact_data, redact_text
from clm_policy.memory.redact.judge import is_placeholder, looks_credential, looks_secret

ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"


def fake(alphabet: str, n: int, seed: int) -> str:
    """``n`` random-looking characters, the same on every run."""
    rng = random.Random(seed)
    return "".join(rng.choice(alphabet) for _ in range(n))


S = fake(ALNUM, 24, 500)  # a random-looking secret
DIGEST = fake(HEX, 32, 501)  # a Digest response (an MD5 in hex)
UUID = f"{fake(HEX, 8, 502)}-{fake(HEX, 4, 503)}-4{fake(HEX, 3, 504)}-a{fake(HEX, 3, 505)}-{fake(HEX, 12, 506)}"
G = "[REDACTED:generic-secret]"
A = "[REDACTED:auth-header]"
C = "[REDACTED:curl-user-password]"
HEX16 = fake(HEX, 16, 507)  # a credential too short to look random
SHORT = fake(ALNUM, 9, 508) + "4x"  # 11 characters, a digit among them
TYPED = "p@ss$!w" + fake(ALNUM, 9, 509)  # a password typed into a shell


def _short(value: object) -> str:
    return repr(value)[:40]


# (text, expected): the generic rule, one line per syntax; the key stays, the value goes.
# fmt: off
GENERIC: list[tuple[str, str]] = [
    # shell, .env
    (f"export API_TOKEN={S}", f"export API_TOKEN={G}"),
    (f'API_TOKEN="{S}" ./deploy.sh', f'API_TOKEN="{G}" ./deploy.sh'),
    (f"DB_PASSWORD={S}\nDB_USER=app\n", f"DB_PASSWORD={G}\nDB_USER=app\n"),
    (f"$env:API_TOKEN = '{S}'", f"$env:API_TOKEN = '{G}'"),
    # Python
    (f'api_key = "{S}"', f'api_key = "{G}"'),
    (f'os.environ["API_KEY"] = "{S}"', f'os.environ["API_KEY"] = "{G}"'),
    (f'getenv_or_default("api_token", "{S}")', f'getenv_or_default("api_token", "{G}")'),
    (f'dict(password="{S}")', f'dict(password="{G}")'),
    (f'SECRET_KEY = b"{S}"', f'SECRET_KEY = b"{G}"'),
    (f"password: str = r'{S}'", f"password: str = r'{G}'"),
    (f'(token := "{S}")', f'(token := "{G}")'),
    # JavaScript, TypeScript
    (f'const apiKey = "{S}";', f'const apiKey = "{G}";'),
    (f'fetch(url, {{token: "{S}"}})', f'fetch(url, {{token: "{G}"}})'),
    (f"const apiKey: string = '{S}';", f"const apiKey: string = '{G}';"),
    (f"const token = `{S}`;", f"const token = `{G}`;"),
    (f'this.token ??= "{S}";', f'this.token ??= "{G}";'),
    # Go
    (f'var apiToken string = "{S}"', f'var apiToken string = "{G}"'),
    (f'token := "{S}"', f'token := "{G}"'),
    (f"apiKey := `{S}`", f"apiKey := `{G}`"),
    # Java, Kotlin, C#, C, Rust
    (f'String password = "{S}";', f'String password = "{G}";'),
    (f'private static final String API_TOKEN = "{S}";', f'private static final String API_TOKEN = "{G}";'),
    (f'val secret = "{S}"', f'val secret = "{G}"'),
    (f'System.setProperty("API_KEY", "{S}");', f'System.setProperty("API_KEY", "{G}");'),
    (f'props.put("db.password", "{S}");', f'props.put("db.password", "{G}");'),
    (f'var password = "{S}";', f'var password = "{G}";'),
    (f'string apiKey = @"{S}";', f'string apiKey = @"{G}";'),
    (f'char password[] = "{S}";', f'char password[] = "{G}";'),
    (f'let api_key: &str = "{S}";', f'let api_key: &str = "{G}";'),
    # PHP
    (f"$password = '{S}';", f"$password = '{G}';"),
    (f'$token .= "{S}";', f'$token .= "{G}";'),
    (f"'password' => '{S}',", f"'password' => '{G}',"),
    (f"$cfg['db']['password'] = '{S}';", f"$cfg['db']['password'] = '{G}';"),
    (f"define('API_KEY', '{S}');", f"define('API_KEY', '{G}');"),
    # Ruby
    (f'client.new(password: "{S}")', f'client.new(password: "{G}")'),
    (f'ENV["TOKEN"] = "{S}"', f'ENV["TOKEN"] = "{G}"'),
    (f'@token ||= "{S}"', f'@token ||= "{G}"'),
    (f':api_key => "{S}"', f':api_key => "{G}"'),
    # YAML, TOML, INI, JSON
    (f"db:\n  password: {S}\n", f"db:\n  password: {G}\n"),
    (f'password: "{S}"', f'password: "{G}"'),
    (f"password: abc=def{S}", f"password: {G}"),  # a value holding "=" is redacted whole
    (f"token: {S}==", f"token: {G}"),
    (f'[db]\npassword = "{S}"\n', f'[db]\npassword = "{G}"\n'),
    (f"[db]\npassword={S}\n", f"[db]\npassword={G}\n"),
    (f'{{"password": "{S}", "user": "bob"}}', f'{{"password": "{G}", "user": "bob"}}'),
    # XML
    (f"<password>{S}</password>", f"<password>{G}</password>"),
    (f"<db:password>{S}</db:password>", f"<db:password>{G}</db:password>"),
    (f'<password encrypted="false">\n  {S}\n</password>', f'<password encrypted="false">\n  {G}\n</password>'),
    (f'<add key="ApiKey" value="{S}"/>', f'<add key="ApiKey" value="{G}"/>'),
    (f'<entry key="password">{S}</entry>', f'<entry key="password">{G}</entry>'),
    # Makefile
    (f"TOKEN ::= {S}", f"TOKEN ::= {G}"),
    (f"TOKEN :::= {S}", f"TOKEN :::= {G}"),
    (f"TOKEN ?= {S}", f"TOKEN ?= {G}"),
    (f"TOKEN := {S}", f"TOKEN := {G}"),
    (f"TOKEN += {S}", f"TOKEN += {G}"),
    # creds
    (f"db_creds={S}", f"db_creds={G}"),
    (f'{{"creds": "{S}"}}', f'{{"creds": "{G}"}}'),
    # a key spelt like a header in lower case is an ordinary key: token:, "apiKey":
    (f"token: {S}", f"token: {G}"),
    (f'{{"apiKey": "{S}"}}', f'{{"apiKey": "{G}"}}'),
    (f'headers["Token"] = "{S}"', f'headers["Token"] = "{G}"'),
    # command-line flags
    (f"mysql --password {S} --user root", f"mysql --password {G} --user root"),
    (f"deploy --db-token={S} --dry-run", f"deploy --db-token={G} --dry-run"),
    # a secret-named key whose tail is no reference word; Vault's secret_id is a secret
    (f"secret_id: {UUID}", f"secret_id: {G}"),
    (f"api_token_value = {S}", f"api_token_value = {G}"),
]

AUTH_HEADER: list[tuple[str, str]] = [
    (f"curl -H 'Authorization: Token {S}' https://api.example.com", f"curl -H 'Authorization: Token {A}' https://api.example.com"),
    (f'curl -H "Authorization: Api-Token {S}" https://x', f'curl -H "Authorization: Api-Token {A}" https://x'),
    (f"Authorization: SSWS {S}", f"Authorization: SSWS {A}"),
    (f"Authorization: Bot {S}", f"Authorization: Bot {A}"),
    (f"authorization: token {S}", f"authorization: token {A}"),
    (f"Proxy-Authorization: Token {S}", f"Proxy-Authorization: Token {A}"),
    (f"Authorization: Token {fake(HEX, 40, 510)}", f"Authorization: Token {A}"),
    (f"Authorization: Key mango{fake(string.digits, 4, 511)}", f"Authorization: Key {A}"),  # weak, but a credential
    (f"GET / HTTP/1.1\r\nHost: api\r\nAuthorization: ApiKey {S}==\r\n\r\n", f"GET / HTTP/1.1\r\nHost: api\r\nAuthorization: ApiKey {A}\r\n\r\n"),
    (f'{{"headers": {{"Authorization": "Token {S}"}}}}', f'{{"headers": {{"Authorization": "Token {A}"}}}}'),
    (f'headers["Authorization"] = f"Token {S}"', f'headers["Authorization"] = f"Token {A}"'),
    (f'req.Header.Set("Authorization", "Token {S}")', f'req.Header.Set("Authorization", "Token {A}")'),
    (f"h=Authorization%3A%20Token%20{S}%0A", f"h=Authorization%3A%20Token%20{A}%0A"),
    # no scheme: the header's value is the credential
    (f"curl -H 'Authorization: {HEX16}' https://x", f"curl -H 'Authorization: {A}' https://x"),
    (f'curl --header "Authorization:  {UUID}"', f'curl --header "Authorization:  {A}"'),
    # custom token headers: in curl -H, an HTTP dump, curl -v, YAML and JSON maps, code
    (f"Token: {S}", f"Token: {A}"),
    (f"curl -H 'Token: {HEX16}' https://x", f"curl -H 'Token: {A}' https://x"),
    (f"curl -H 'X-Api-Key: {S}' https://api.example.com", f"curl -H 'X-Api-Key: {A}' https://api.example.com"),
    (f'curl -s --header "PRIVATE-TOKEN: {HEX16}" https://x', f'curl -s --header "PRIVATE-TOKEN: {A}" https://x'),
    (f"curl -H 'apikey: {UUID}' https://x", f"curl -H 'apikey: {A}' https://x"),
    (f"curl -H 'Api-Token: {SHORT}' https://x", f"curl -H 'Api-Token: {A}' https://x"),
    (f"GET /v4/projects HTTP/1.1\r\nHost: gitlab.example.com\r\nPRIVATE-TOKEN: {S}\r\n", f"GET /v4/projects HTTP/1.1\r\nHost: gitlab.example.com\r\nPRIVATE-TOKEN: {A}\r\n"),
    (f"> GET / HTTP/2\n> token: {HEX16}\n", f"> GET / HTTP/2\n> token: {A}\n"),
    (f"X-Auth-Token: {S}", f"X-Auth-Token: {A}"),
    (f"Api-Key: {S}", f"Api-Key: {A}"),
    (f"X-Octopus-ApiKey: {UUID}", f"X-Octopus-ApiKey: {A}"),
    (f"Ocp-Apim-Subscription-Key: {HEX16}", f"Ocp-Apim-Subscription-Key: {A}"),
    (f"headers:\n  X-Vault-Token: {HEX16}\n", f"headers:\n  X-Vault-Token: {A}\n"),
    (f'{{"headers": {{"X-Api-Key": "{S}", "Accept": "*/*"}}}}', f'{{"headers": {{"X-Api-Key": "{A}", "Accept": "*/*"}}}}'),
    (f'req.Header.Set("X-Api-Key", "{HEX16}")', f'req.Header.Set("X-Api-Key", "{A}")'),
    (f"headers['X-Auth-Token'] = '{HEX16}'", f"headers['X-Auth-Token'] = '{A}'"),
    (f"{{'Private-Token' => '{HEX16}'}}", f"{{'Private-Token' => '{A}'}}"),
    (f'proxy_set_header X-Api-Key "{HEX16}";', f'proxy_set_header X-Api-Key "{A}";'),
    (f"http GET https://x X-Api-Key:{HEX16}", f"http GET https://x X-Api-Key:{A}"),
    (f'wget --header="Token: {HEX16}" https://x', f'wget --header="Token: {A}" https://x'),
    (
        f'Authorization: Digest username="bob", realm="api", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", uri="/", qop=auth, nc=00000001, cnonce="0a4f113b", response="{DIGEST}", opaque="5ccc069c403ebaf9f0171e9517f40e41"',
        f'Authorization: Digest username="bob", realm="api", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", uri="/", qop=auth, nc=00000001, cnonce="0a4f113b", response="{A}", opaque="5ccc069c403ebaf9f0171e9517f40e41"',
    ),
]

CURL: list[tuple[str, str]] = [
    (f"curl -u deploy:{S} https://x", f"curl -u deploy:{C} https://x"),
    (f"curl --user deploy:{S} https://x", f"curl --user deploy:{C} https://x"),
    (f"curl --user=deploy:{S} https://x", f"curl --user=deploy:{C} https://x"),
    (f"curl -udeploy:{S} https://x", f"curl -udeploy:{C} https://x"),
    (f"curl -s -u 'deploy:{S}' https://x", f"curl -s -u 'deploy:{C}' https://x"),
    (f'curl -u "me@example.com:{S}" https://x', f'curl -u "me@example.com:{C}" https://x'),
    (f"curl -u :{S} https://x", f"curl -u :{C} https://x"),
    (f"curl -x http://proxy:3128 -U proxyuser:{S} https://x", f"curl -x http://proxy:3128 -U proxyuser:{C} https://x"),
    (f"curl --proxy-user proxyuser:{S} https://x", f"curl --proxy-user proxyuser:{C} https://x"),
    ("curl -u admin:mango2024! https://x", f"curl -u admin:{C} https://x"),  # weak, but after curl
    (json.dumps({"cmd": f'curl -u "deploy:{S}" https://x'}), json.dumps({"cmd": f'curl -u "deploy:{C}" https://x'})),
    (f"http --check-status -u deploy:{S} https://x", f"http --check-status -u deploy:{C} https://x"),  # random: any tool
    # a password with $ and !, quoted, with spaces, after an empty user, on a continued line
    (f"curl -u 'deploy:{TYPED}' https://x", f"curl -u 'deploy:{C}' https://x"),
    (f'curl -u "deploy:{TYPED}" https://x', f'curl -u "deploy:{C}" https://x'),
    (f"curl -u deploy:{TYPED} https://x", f"curl -u deploy:{C} https://x"),
    (f"curl -u 'admin:$ecr3t!{SHORT}' https://x", f"curl -u 'admin:{C}' https://x"),
    (f"curl --user  'j.smith:{SHORT} and more' https://x", f"curl --user  'j.smith:{C}' https://x"),
    (f"curl -u ':{TYPED}' https://x", f"curl -u ':{C}' https://x"),
    (f'curl --user=":{S}" https://x', f'curl --user=":{C}" https://x'),
    (f"curl --user kevin:'{TYPED}' -X PATCH https://x", f"curl --user kevin:'{C}' -X PATCH https://x"),
    (f'curl --user "ci":"{TYPED}" https://x', f'curl --user "ci":"{C}" https://x'),
    ("curl -sS -X POST https://x \\\n  -H 'Accept: */*' \\\n  -u deploy:mango2024!", f"curl -sS -X POST https://x \\\n  -H 'Accept: */*' \\\n  -u deploy:{C}"),
    (f"curl -x http://p:3128 --proxy-user 'alice:{TYPED}' https://x", f"curl -x http://p:3128 --proxy-user 'alice:{C}' https://x"),
    # the password empty: the user is the key
    (f'curl -u "{S}:" https://x', f'curl -u "{C}:" https://x'),
    (f"curl https://api.example.com/v1/charges -u {S}:", f"curl https://api.example.com/v1/charges -u {C}:"),
]
# fmt: on


@pytest.mark.parametrize(("text", "expected"), GENERIC, ids=_short)
def test_generic_rule_reads_each_syntax(text: str, expected: str) -> None:
    assert redact_text(text) == Redaction(expected, {"generic-secret": 1})


@pytest.mark.parametrize(("text", "expected"), AUTH_HEADER, ids=_short)
def test_authorization_header_with_any_scheme(text: str, expected: str) -> None:
    assert redact_text(text) == Redaction(expected, {"auth-header": 1})


@pytest.mark.parametrize(("text", "expected"), CURL, ids=_short)
def test_curl_password_is_redacted_and_the_user_kept(text: str, expected: str) -> None:
    assert redact_text(text) == Redaction(expected, {"curl-user-password": 1})


def test_bearer_and_basic_keep_their_own_rules() -> None:
    text = f"Authorization: Bearer {S}\nAuthorization: Basic {fake(ALNUM, 20, 520)}="
    assert redact_text(text).counts == {"bearer-token": 1, "basic-auth": 1}
    # a word after Bearer is no credential, and auth-header does not take it instead
    assert redact_text("Authorization: Bearer required") == Redaction(
        "Authorization: Bearer required", {}
    )


# fmt: off
NOT_SECRETS: dict[str, list[str]] = {
    "placeholders": [
        "password: aaaaaaaaaaaaaaaa",
        "token: xxxxxxxxxxxxxxxxxxxxxxxx",
        f"token: sk-xxxxxxxxxxxx{S[:4]}",
        "api_key: XXXX-XXXX-XXXX-XXXX",
        'password: "********"',
        f"token: ****************{S[:4]}",
        f"api_key = 'EXAMPLE{S[:12]}'",
        "api_key: <your-token>",
        "api_key = '<YOUR_API_KEY>'",
        "password: ${DB_PASSWORD}",
        "password=$(vault read -field=password secret/db)",
        "password: '{{ db_password }}'",
        "password: %DB_PASSWORD%",
        "password: {password}",
        'dsn_password = f"{prefix}{password}"',
        "password: changeme",
        "password: changeme123",
        "password = 'ChangeMe123!'",
        "password = 'P@ssw0rd1'",
        "keystore_password=changeit",
        "POSTGRES_PASSWORD=mysecretpassword",
        "secret: supersecret",
        'api_key = "0123456789abcdef"',
        "password: qwerty123456",
        "password: hunter2",
    ],
    "aws example": [
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        '"SecretAccessKey": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"',
    ],
    "identifiers": [
        f"credentialsId: '{UUID}'",
        f"git(url: 'https://github.com/acme/app.git', credentialsId: '{UUID}')",
        f"withCredentials([string(credentialsId: '{UUID}', variable: 'TOKEN')])",
        f'{{"tokenId": "{UUID}", "secretName": "db-creds-x7k2p"}}',
        "secret_arn: arn:aws:secretsmanager:us-east-1:123456789012:secret:prod/db-AbCdEf",
        "db_password: arn:aws:ssm:eu-west-1:123456789012:parameter/prod/db/password",
        "secret: projects/acme-prod/secrets/db-password/versions/latest",
        "secretName: my-app-secret",
        "secret: my-app-secret-7f9c2b",
        "token: default-token-x7k2p",
        "auth: vault.internal:8200",
        "auth_server: 10.0.0.12:8443",
        "token_type: bearer",
        "password_min_length: 12",
        "token_url: https://auth.example.com/oauth/token",
        'api_key_env = "OPENAI_API_KEY"',
        f"secret_version = {S}",  # a key naming a version of the secret, not the secret
        "COCOA = {'PKPaymentToken', 'PKPushCredentials', 'ASPasswordCredentialIdentity'}",
        "tokens = ['NSPersistentHistoryToken',\n    'NSQueryGenerationToken']",
        "creds = self._credentials_to_save",
        "password_keyword = r'(?:secret[-_]?(?:access)?[-_]?key)'",
        "if token == Comment.Special:",
        "auth_backend: RemoteUserBackend",
        f"vault write auth/approle/login --secret-name db-creds --credentials-id {UUID}",
    ],
    "csrf": [
        f'<input type="hidden" name="csrf_token" value="{S}">',
        f'<meta name="csrf-token" content="{S}">',
        f"X-CSRF-Token: {S}",
        f"X-XSRF-TOKEN: {S}",
        f'{{"authenticity_token": "{S}"}}',
        f"csrfToken: '{S}'",
        f'<input name="__RequestVerificationToken" value="{S}" />',
    ],
    "paths and references": [
        "password_file: /run/secrets/db_password",
        "token: ./secrets/token.txt",
        "api_key: process.env.OPENAI_API_KEY",
        'token = os.environ["GITHUB_TOKEN"]',
        'password = os.getenv("DB_PASSWORD", "")',
        "password=get_password(request)",
        'token: ENV.fetch("TOKEN")',
        "secretKeyRef: {name: db-credentials-v2, key: password}",
    ],
    "curl and -u": [
        "docker run -u 1000:1000 app",
        "docker run --user app:staff app",
        "docker run -u app:mango2024! app",  # weak, and not after curl
        "curl -u admin:changeme https://x",
        'curl -u "$USER:$TOKEN" https://x',
        "curl --user '$USERNAME:$PASSWORD' https://x",  # single quotes, but names all the same
        "curl -u admin:${PASSWORD} https://x",
        'curl -u "${user}:${pass}" https://x',
        'curl --user "$(cat u.txt):$(cat p.txt)" https://x',
        'curl -u "${{ secrets.USER }}:${{ secrets.PASSWORD }}" https://x',
        "curl -sL --user \"$1:$2\" \"$3\"",
        "curl -u <user>:<password> https://x",
        "curl --user neo4j:[PASSWORD] http://x:7474/db",
        "curl -i -u 'test:test' https://x",
        'curl --user "username:password" https://x',
        'curl -u ":" https://x',
        "curl -u admin: https://x",  # an empty password after a name
        'curl -u "$STRIPE_KEY:" https://x',
        "curl -u deploy https://x",
        "git push -u origin main",
        'curl --user-agent "Mozilla/5.0: x" https://x',
    ],
    "token headers": [
        "curl -H 'X-Api-Key: $API_KEY' https://x",
        'curl -H "Token: ${TOKEN}" https://x',
        "PRIVATE-TOKEN: <your_access_token>",
        "X-Api-Key: YOUR_API_KEY",
        "X-Api-Key: ********",
        "headers:\n  X-Api-Key: {{ .Values.apiKey }}\n",
        f"Idempotency-Key: {UUID}",
        f"X-Request-Id: {UUID}",
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
        f"X-Next-Page-Token: {S}",
        f'{{"NextToken": "{S}", "nextPageToken": "{S}"}}',
        "Token: required",
        "max-tokens: 4096",
        "X-Token-Count: 128000",
        "Authorization: AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request",
        "client-key: /etc/ssl/private/client.key",
        "password=pypi-AgEIcHlwaS5vcmc<token>",
        "headers = {'x-amz-date': timestamp, 'Authorization': v4auth_header}",  # a variable
        "fetch(url, { headers: { 'X-Api-Key': apiKeyFromEnv2 } })",
    ],
    "authorization": [
        "Authorization: Token <your-token>",
        "Authorization: Token $API_TOKEN",
        "Authorization: Token YOUR_API_TOKEN",
        "authorization: required for /v2",
        "Authorization: Token-based, see RFC 6750",
        'Authorization: Token token="$TOKEN"',
        'req.Header.Set("Authorization", "Token "+tok)',
    ],
}
# fmt: on


@pytest.mark.parametrize("text", [t for texts in NOT_SECRETS.values() for t in texts], ids=_short)
def test_what_is_not_a_secret_is_left_alone(text: str) -> None:
    assert redact_text(text) == Redaction(text, {})


def test_redacting_twice_changes_nothing() -> None:
    samples = [text for text, _ in GENERIC + AUTH_HEADER + CURL]
    samples += [t for texts in NOT_SECRETS.values() for t in texts]
    for sample in samples:
        once = redact_text(sample).text
        assert redact_text(once) == Redaction(once, {}), sample


def test_plain_data_keys_follow_the_same_line() -> None:
    data = {
        "headers": {"X-Api-Key": S, "Authorization": f"Token {S}"},
        "credentialsId": UUID,
        "secret_id": UUID,
        "secretName": "db-creds-x7k2p",
        "csrf_token": S,
        "aws_secret_access_key": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "creds": S,
    }
    redacted, counts = redact_data(data)
    assert redacted == {
        # a header map's value has no key left in its string: it is judged whole, as a
        # credential (a header named for one)
        "headers": {"X-Api-Key": A, "Authorization": A},
        "credentialsId": UUID,
        "secret_id": G,
        "secretName": "db-creds-x7k2p",
        "csrf_token": S,
        "aws_secret_access_key": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "creds": G,
    }
    assert counts == {"auth-header": 2, "generic-secret": 2}
    weak = {"Token": HEX16, "X-Csrf-Token": HEX16, "token": HEX16, "Idempotency-Key": HEX16}
    assert redact_data(weak) == ({**weak, "Token": A}, {"auth-header": 1})


@pytest.mark.parametrize(
    ("value", "placeholder", "secret", "credential"),
    [
        (S, False, True, True),
        ("Xk9mQ2pL", False, True, True),
        ("mango2024!", False, False, True),  # weak: a credential only where nothing else fits
        ("required", False, False, False),
        ("changeme123", True, False, False),
        ("P@ssw0rd1", True, False, False),
        ("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", True, False, False),
        ("db.internal:5432", True, False, False),
        ("NSURLCredentialStorage", True, False, False),
        ("self._credentials", True, False, False),
        (f"{S}==", False, True, True),
    ],
)
def test_judge(value: str, placeholder: bool, secret: bool, credential: bool) -> None:
    assert (is_placeholder(value), looks_secret(value), looks_credential(value)) == (
        placeholder,
        secret,
        credential,
    )


# Inputs built to make a careless pattern backtrack: each must come back with the right answer.
# Quadratic work on any would keep this test from finishing (times: docs/redaction.md, Speed).
# fmt: off
LONG_RUNS: dict[str, tuple[str, dict[str, int]]] = {
    "keys": ("password=" * 50_000, {}),
    "keys-then-paren": ("password=" * 50_000 + "(", {}),
    "colon-keys-then-paren": ("password: " * 50_000 + "(", {}),
    "short-flags": ("-u " * 100_000, {}),
    "glued-flags": ("-uuser:" * 70_000, {}),
    "long-flags": ("--user " * 70_000, {}),
    "curl-flags": ("curl -u a:" * 50_000, {}),
    "elements": ("<password>" * 50_000, {}),
    "element-then-keys": ("<password>" + "x_password=" * 50_000, {}),
    "element-attributes": (("<password " + "a" * 100) * 5_000, {}),
    "schemes": ("Authorization: Token " * 30_000, {}),
    "bearer-schemes": ("Authorization: Bearer " * 30_000, {}),
    "digest-responses": ('response="' * 100_000, {}),
    "make-assignments": (":=" * 100_000, {}),
    "make-immediate": ("::=" * 100_000, {}),
    "go-assignments": ("token := " * 50_000, {}),
    "php-appends": ("$password .= " * 30_000, {}),
    "php-arrows": ("'password' => " * 30_000, {}),
    "json-keys": ('"password": ' * 30_000, {}),
    "xml-attributes": ('<add key="ApiKey" value=' * 20_000, {}),
    "call-arguments": ('getenv("api_token", ' * 30_000, {}),
    "subscripts": ('os.environ["API_KEY"] = ' * 30_000, {}),
    "go-types": ("var apiToken string = " * 30_000, {}),
    "annotations": ("password: str" * 70_000, {}),
    "yaml-equals": ("password: abc=" * 50_000, {}),
    "headers": ("X-Api-Key: " * 50_000, {}),
    "reference-keys": ("credentialsId=" * 60_000, {}),
    "csrf-keys": ("csrf_token=" * 60_000, {}),
    "many-curl-passwords": (f"curl -u deploy:{S} https://x\n" * 5_000, {"curl-user-password": 5_000}),
    "many-schemes": (f"Authorization: Token {S}\n" * 5_000, {"auth-header": 5_000}),
    "many-elements": (f"<password>{S}</password>" * 5_000, {"generic-secret": 5_000}),
}
# fmt: on


@pytest.mark.parametrize(("text", "counts"), LONG_RUNS.values(), ids=LONG_RUNS.keys())
def test_long_adversarial_inputs_are_read_in_linear_time(text: str, counts: dict[str, int]) -> None:
    result = redact_text(text)
    assert result.counts == counts
    if not counts:
        assert result.text == text


# fmt: off
FOUND_BY_THE_CORPUS: list[tuple[str, str]] = [
    # a placeholder where an AWS secret goes
    ("aws_secret_access_key=" + "X" * 40, "aws_secret_access_key=" + "X" * 40),
    # a token-shaped placeholder with <…> in it, quoted under a secret key
    ('{"github_token": "ghp_<your-token>"}', '{"github_token": "ghp_<your-token>"}'),
    ("gitlab_token = 'glpat-<token>'", "gitlab_token = 'glpat-<token>'"),
    # base64 of a sentence is no secret; base64 of user:password is
    ("auth_banner: V2VsY29tZSB0byB0aGUgc3RhZ2luZyBjbHVzdGVy", "auth_banner: V2VsY29tZSB0byB0aGUgc3RhZ2luZyBjbHVzdGVy"),
    ("auth: ZGVwbG95OlhrOW1QMnZMN3FSNG5XOHQ=", "auth: [REDACTED:generic-secret]"),
    # PowerShell turns a plain-text password into a SecureString
    ('$pw = ConvertTo-SecureString "Xk9mP2vL7qR4" -AsPlainText -Force', '$pw = ConvertTo-SecureString "[REDACTED:generic-secret]" -AsPlainText -Force'),
    ("convertto-securestring -String 'mango2024!' -asplaintext", "convertto-securestring -String '[REDACTED:generic-secret]' -asplaintext"),
    ('ConvertTo-SecureString "changeme" -AsPlainText -Force', 'ConvertTo-SecureString "changeme" -AsPlainText -Force'),
]
# fmt: on


@pytest.mark.parametrize(("text", "expected"), FOUND_BY_THE_CORPUS)
def test_cases_the_corpus_found(text: str, expected: str) -> None:
    assert redact_text(text).text == expected
    assert redact_text(expected).text == expected
