"""clm_policy.memory.redact: passwords where a tool's format puts them (issue 26) — libpq,
MySQL, Redis, SSH and Docker option and variable names, htpasswd, Azure Storage connection
strings, account keys and SAS signatures, passwords a sentence names — and the Anthropic keys
and ``curl -u`` passwords a scanner's own rule tests showed missing. Exact output; each shape
with the near misses that must stay.

Every value is made up here; a password a person types (``Tr0ub4dor&3``) is as weak as they
come and still redacted where only a password can stand.
"""

from __future__ import annotations

import base64
import random
import string

import pytest

from clm_policy.memory.redact import Redaction, redact_text

ALNUM = string.ascii_letters + string.digits


def fake(alphabet: str, n: int, seed: int) -> str:
    rng = random.Random(seed)
    return "".join(rng.choice(alphabet) for _ in range(n))


TYPED = "Tr0ub4dor&3"  # a password a person typed
SHORT = "hunter2x"  # 8 characters, a digit
ACCOUNT_KEY = base64.b64encode(random.Random(2601).randbytes(64)).decode()  # 88, ends "=="
SHARED_KEY = base64.b64encode(random.Random(2602).randbytes(32)).decode()  # 44
SIG = base64.b64encode(random.Random(2603).randbytes(32)).decode()
SIG_URL = SIG.replace("+", "%2B").replace("/", "%2F").replace("=", "%3D")
P = "[REDACTED:password-variable]"
CLI = "[REDACTED:command-line-password]"
K = "[REDACTED:azure-storage-key]"
SAS = "[REDACTED:azure-sas-signature]"
T = "[REDACTED:prose-password]"
C = "[REDACTED:curl-user-password]"
G = "[REDACTED:generic-secret]"


def _id(value: object) -> str:
    return repr(value)[:50]


# fmt: off
FOUND: list[tuple[str, str]] = [
    # libpq, MySQL, Redis, SSH variables: in a command's environment, exported, .env, YAML, JSON
    (f"PGPASSWORD={TYPED} psql -h db -U app", f"PGPASSWORD={P} psql -h db -U app"),
    (f"PGPASSWORD='{TYPED}' pg_dump -h db app > app.sql", f"PGPASSWORD='{P}' pg_dump -h db app > app.sql"),
    (f"export PGPASSWORD={SHORT}", f"export PGPASSWORD={P}"),
    (f"PGPASS={TYPED}\nPGUSER=app\n", f"PGPASS={P}\nPGUSER=app\n"),
    (f"DB_PASS={TYPED}\n", f"DB_PASS={P}\n"),
    (f"DBPASSWORD={TYPED}\n", f"DBPASSWORD={P}\n"),
    (f"MYSQL_PWD={TYPED} mysql -u root", f"MYSQL_PWD={P} mysql -u root"),
    (f"MYSQL_ROOT_PASSWORD={TYPED}", f"MYSQL_ROOT_PASSWORD={P}"),
    (f"REDISCLI_AUTH={TYPED} redis-cli ping", f"REDISCLI_AUTH={P} redis-cli ping"),
    (f"SSHPASS={TYPED} sshpass -e ssh deploy@host", f"SSHPASS={P} sshpass -e ssh deploy@host"),
    (f"docker run -e POSTGRES_PASSWORD={TYPED} postgres:16", f"docker run -e POSTGRES_PASSWORD={P} postgres:16"),
    (f"env:\n  PGPASSWORD: {TYPED}\n", f"env:\n  PGPASSWORD: {P}\n"),
    (f'{{"DB_PASS": "{TYPED}"}}', f'{{"DB_PASS": "{P}"}}'),
    (f"ENV PGPASSWORD {TYPED}", f"ENV PGPASSWORD {P}"),
    (f'$env:PGPASSWORD = "{TYPED}"', f'$env:PGPASSWORD = "{P}"'),
    # MySQL and MariaDB clients: -p glued to the password, --password=
    (f"mysql -u root -p{TYPED} shop", f"mysql -u root -p{CLI} shop"),
    (f"mysqldump -uroot -p'{TYPED}' --all-databases > all.sql", f"mysqldump -uroot -p'{CLI}' --all-databases > all.sql"),
    (f'mariadb -h db -u app -p"{SHORT}"', f'mariadb -h db -u app -p"{CLI}"'),
    (f"mysql --user=app --password={TYPED} -e 'select 1'", f"mysql --user=app --password={CLI} -e 'select 1'"),
    (f"mysqladmin -u root -p{TYPED} status", f"mysqladmin -u root -p{CLI} status"),
    (f"docker exec db mysql -uroot -p{TYPED} -e 'show databases'", f"docker exec db mysql -uroot -p{CLI} -e 'show databases'"),
    # Redis: redis-cli -a, --pass; requirepass and masterauth in redis.conf
    (f"redis-cli -h cache -p 6379 -a {TYPED} ping", f"redis-cli -h cache -p 6379 -a {CLI} ping"),
    (f"redis-cli -a '{TYPED}' --no-auth-warning info", f"redis-cli -a '{CLI}' --no-auth-warning info"),
    (f"redis-cli --pass {TYPED} keys '*'", f"redis-cli --pass {CLI} keys '*'"),
    (f"requirepass {TYPED}\nmaxmemory 2gb\n", f"requirepass {CLI}\nmaxmemory 2gb\n"),
    (f"masterauth {TYPED}", f"masterauth {CLI}"),
    # sshpass -p
    (f"sshpass -p {TYPED} ssh deploy@10.0.0.5", f"sshpass -p {CLI} ssh deploy@10.0.0.5"),
    (f"sshpass -p'{TYPED}' scp app.tgz deploy@host:/srv", f"sshpass -p'{CLI}' scp app.tgz deploy@host:/srv"),
    (f'sshpass -p "{SHORT}" rsync -a dist/ host:/srv', f'sshpass -p "{CLI}" rsync -a dist/ host:/srv'),
    # docker (podman, helm registry) login -p / --password
    (f"docker login -u ci -p {TYPED} registry.example.com", f"docker login -u ci -p {CLI} registry.example.com"),
    (f"docker login --username ci --password {TYPED} ghcr.io", f"docker login --username ci --password {CLI} ghcr.io"),
    (f"podman login -u ci -p '{TYPED}' quay.io", f"podman login -u ci -p '{CLI}' quay.io"),
    (f"helm registry login reg.example.com -u ci --password={TYPED}", f"helm registry login reg.example.com -u ci --password={CLI}"),
    # htpasswd -b: the password is on the command line
    (f"htpasswd -b .htpasswd admin {TYPED}", f"htpasswd -b .htpasswd admin {CLI}"),
    (f"htpasswd -cb /etc/nginx/.htpasswd admin {TYPED}", f"htpasswd -cb /etc/nginx/.htpasswd admin {CLI}"),
    (f"htpasswd -nb admin '{TYPED}' > auth", f"htpasswd -nb admin '{CLI}' > auth"),
    (f"htpasswd -B -C 12 -b users.db alice {SHORT}", f"htpasswd -B -C 12 -b users.db alice {CLI}"),
    # Azure Storage: AccountKey= in a connection string, the key's variables and flag
    (
        f"DefaultEndpointsProtocol=https;AccountName=shopdata;AccountKey={ACCOUNT_KEY};EndpointSuffix=core.windows.net",
        f"DefaultEndpointsProtocol=https;AccountName=shopdata;AccountKey={K};EndpointSuffix=core.windows.net",
    ),
    (f'"StorageConnection": "AccountName=x;AccountKey={ACCOUNT_KEY}"', f'"StorageConnection": "AccountName=x;AccountKey={K}"'),
    (f"AZURE_STORAGE_KEY={ACCOUNT_KEY}", f"AZURE_STORAGE_KEY={K}"),
    (f"export AZURE_STORAGE_ACCESS_KEY='{ACCOUNT_KEY}'", f"export AZURE_STORAGE_ACCESS_KEY='{K}'"),
    (f"az storage blob list --account-name shopdata --account-key {ACCOUNT_KEY} -c logs", f"az storage blob list --account-name shopdata --account-key {K} -c logs"),
    (
        f"Endpoint=sb://shop.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={SHARED_KEY}",
        f"Endpoint=sb://shop.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={K}",
    ),
    # a SAS token's signature
    (
        f"https://shopdata.blob.core.windows.net/logs/a.txt?sv=2022-11-02&ss=b&srt=o&sp=r&se=2030-01-01T00:00:00Z&spr=https&sig={SIG_URL}",
        f"https://shopdata.blob.core.windows.net/logs/a.txt?sv=2022-11-02&ss=b&srt=o&sp=r&se=2030-01-01T00:00:00Z&spr=https&sig={SAS}",
    ),
    (f"BlobEndpoint=https://x.blob.core.windows.net/;SharedAccessSignature=sv=2022-11-02&sig={SIG_URL}", f"BlobEndpoint=https://x.blob.core.windows.net/;SharedAccessSignature=sv=2022-11-02&sig={SAS}"),
    (f'AZURE_SAS="?sp=racwdl&st=2024-05-14&se=2024-06-14&sv=2022-11-02&sr=c&sig={SIG}"', f'AZURE_SAS="?sp=racwdl&st=2024-05-14&se=2024-06-14&sv=2022-11-02&sr=c&sig={SAS}"'),
    # a password a sentence names
    (f"The staging password is {TYPED}.", f"The staging password is {T}."),
    (f"db creds: user app, pw: {TYPED}", f"db creds: user app, pw: {T}"),
    (f"the root password for db-1 is '{SHORT}', change it", f"the root password for db-1 is '{T}', change it"),
    (f"My password was {SHORT} until yesterday", f"My password was {T} until yesterday"),
    (f"passphrase is {TYPED}", f"passphrase is {T}"),
    # Anthropic keys in their exact format, whatever the body spells
    (
        "key: sk-ant-api03-" + "abc123xyz-456def789ghij-klmnopqrstuvwx-3456yza789bcde-1234fghijklmnopby56aaaogaopaaaabc123xyz" + "AA",
        "key: [REDACTED:anthropic-api-key]",
    ),
    (
        "sk-ant-admin01-" + "abc12fake-456def789ghij-klmnopqrstuvwx-3456yza789bcde-12fakehijklmnopby56aaaogaopaaaabc123xyz" + "AA",
        "[REDACTED:anthropic-admin-key]",
    ),
    # curl -u: a password that spells a default word in l33t, a password in braces
    ("curl --cacert ca.crt -u elastic:P@ssw0rd$1 https://localhost:9200", f"curl --cacert ca.crt -u elastic:{C} https://localhost:9200"),
    ('curl -X POST --user "{acd3c08b-74e8-4f44-a2d0-80694le24f46}":"{ZqL5kVrX1n8tA2}" https://x', f'curl -X POST --user "{{acd3c08b-74e8-4f44-a2d0-80694le24f46}}":"{C}" https://x'),
]

LEFT: list[str] = [
    # variables that name a password without holding one
    "PGPASSWORD=$DB_PASSWORD psql -h db",
    'PGPASSWORD="${PGPASSWORD:-}" psql',
    "PGPASSFILE=~/.pgpass",
    "DB_PASSWORD_FILE=/run/secrets/db_password",
    "MYSQL_ALLOW_EMPTY_PASSWORD=yes",
    "MYSQL_RANDOM_ROOT_PASSWORD=1",
    "POSTGRES_PASSWORD=postgres",
    "DB_PASS=changeme",
    "DB_PASSWORD=[value]",
    "PASSWORD_MIN_LENGTH=12",
    "BYPASS_CACHE=true",
    "COMPASS_URL=https://compass.example.com",
    "PGPASSWORD=",
    # options that are no password
    "mysql -u root -p shop",  # -p alone: the client asks
    "mysql -h db -P 3306 -p",
    "mkdir -p /srv/app && cp -p a b",
    "ssh -p 2222 deploy@host",
    "redis-cli -h cache -p 6379 ping",
    "redis-cli -a $REDIS_PASSWORD ping",
    "requirepass foobared",  # redis.conf's own example
    "sshpass -p $SSHPASS ssh host",
    "sshpass -e ssh host",
    "docker login -u ci --password-stdin ghcr.io",
    "docker login -u ci -p $CI_REGISTRY_PASSWORD $CI_REGISTRY",
    "docker run -p 8080:80 nginx",
    "htpasswd -c .htpasswd admin",  # asks for the password
    "htpasswd -b .htpasswd admin $PASSWORD",
    # Azure: names, placeholders, an account name
    "AccountName=shopdata;AccountKey=<your-account-key>;EndpointSuffix=core.windows.net",
    "AccountKey=" + "x" * 86 + "==",
    "AZURE_STORAGE_KEY=${{ secrets.AZURE_STORAGE_KEY }}",
    "UseDevelopmentStorage=true",
    "sig=abc&sv=2020",
    "the sig= parameter carries the signature",
    # sentences that name a password without one
    "The password is required.",
    "the password is incorrect, try again",
    "Password is stored in Vault under kv/db",
    "password is 8 characters or more",
    "the password is changeme",
    "pw: ${PW}",
    "the password was reset yesterday",
    "pass: 3 of 4 checks",
    "compass is north",
    # Anthropic-shaped placeholders
    "sk-ant-api03-" + "x" * 93 + "AA",
    "sk-ant-api03-<your-key>",
    # curl -u: still names, expansions, placeholders
    "curl -u username:password https://x",
    "curl -u '{user}:{password}' https://x",
]
# fmt: on


@pytest.mark.parametrize(("text", "expected"), FOUND, ids=_id)
def test_each_shape_is_redacted_and_its_key_kept(text: str, expected: str) -> None:
    result = redact_text(text)
    assert result.text == expected
    assert redact_text(expected).text == expected  # redacting twice changes nothing


@pytest.mark.parametrize("text", LEFT, ids=_id)
def test_near_misses_are_left_alone(text: str) -> None:
    assert redact_text(text) == Redaction(text, {})


# Inputs that would make a careless pattern backtrack: the right answer, at once.
# fmt: off
LONG_RUNS: dict[str, tuple[str, dict[str, int]]] = {
    "mysql-p": ("mysql " + "-p " * 100_000, {}),
    "mysql-glued": ("mysql " * 50_000 + "-p", {}),
    "htpasswd-flags": ("htpasswd " + "-b " * 100_000, {}),
    "htpasswd-args": ("htpasswd -b " + "a " * 100_000, {}),
    "password-is": ("password is " * 50_000, {}),
    "password-for": ("password for " * 50_000 + "is", {}),
    "sig": ("&sig=" * 100_000, {}),
    "account-keys": ("AccountKey=" * 50_000, {}),
    "pass-names": ("PGPASSWORD" * 50_000 + "=", {}),
    "many-variables": (f"PGPASSWORD={TYPED}\n" * 5_000, {"password-variable": 5_000}),
}
# fmt: on


@pytest.mark.parametrize(("text", "counts"), LONG_RUNS.values(), ids=LONG_RUNS.keys())
def test_long_adversarial_inputs_are_read_in_linear_time(text: str, counts: dict[str, int]) -> None:
    result = redact_text(text)
    assert dict(result.counts) == counts
    if not counts:
        assert result.text == text
