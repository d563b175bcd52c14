"""clm_policy.memory.redact: secrets a person types on a shell's command line, as a transcript
records the commands an agent ran — piped to ``sudo -S``, in ``export NAME=…``, after
``--password``, in ``.netrc``, connection strings and URLs — and what stays unchanged there.
Then a transcript holding such commands goes through ``clm-policy handoff`` into a real memory
repository, and its history holds none of them.

Every fake secret is a typed password or generated from a seeded random.Random; none is real.
"""

from __future__ import annotations

import json
import random
import string
import subprocess
import sys
from pathlib import Path

import pytest

from clm_policy.memory.redact import Redaction, redact_text

from conftest import REPO, git

HEX = "0123456789abcdef"
ALNUM = string.ascii_letters + string.digits


def fake(alphabet: str, n: int, seed: int) -> str:
    rng = random.Random(seed)
    return "".join(rng.choice(alphabet) for _ in range(n))


DEEPSEEK = "sk-" + fake(HEX, 32, 3101)  # an OpenAI-compatible API's key: sk- and 32 hex
NONE_KEY = "sk-None-" + fake(ALNUM, 48, 3102)  # OpenAI's 2024 keys without a project
CLONE_TOKEN = fake(HEX, 40, 3103)  # a token as a URL's user
ENCRYPTION = fake(ALNUM, 32, 3104)
CLI = "[REDACTED:command-line-password]"
VAR = "[REDACTED:secret-variable]"
PV = "[REDACTED:password-variable]"
URL = "[REDACTED:url-password]"
NETRC = "[REDACTED:netrc-password]"
CONN = "[REDACTED:connection-string-password]"
OPENAI = "[REDACTED:openai-api-key]"
BEARER = "[REDACTED:bearer-token]"
SHORT_SK = "sk-" + fake(ALNUM, 24, 3106)  # a bare sk- key under 32 characters


def _id(value: object) -> str:
    return repr(value)[:50]


# fmt: off
FOUND: list[tuple[str, str]] = [
    # a password fed to sudo -S (or another command that reads it from standard input)
    ("echo hunter2secret | sudo -S apt install x", f"echo {CLI} | sudo -S apt install x"),
    ("printf 'hunter2secret\\n' | sudo -S apt install x", f"printf '{CLI}\\n' | sudo -S apt install x"),
    ('echo -n "Maple2024!" | sudo -k -S systemctl restart app', f'echo -n "{CLI}" | sudo -k -S systemctl restart app'),
    ("echo MyPass99 | sudo -u deploy -S ls /srv", f"echo {CLI} | sudo -u deploy -S ls /srv"),
    ("echo MyPass99 | sudo --stdin ls", f"echo {CLI} | sudo --stdin ls"),
    ("sudo -S apt install x <<< hunter2secret", f"sudo -S apt install x <<< {CLI}"),
    ("sudo -S true <<<'Maple2024!'", f"sudo -S true <<<'{CLI}'"),
    ("echo MyPass99 | docker login -u ci --password-stdin ghcr.io", f"echo {CLI} | docker login -u ci --password-stdin ghcr.io"),
    ("echo MyPass99 | passwd --stdin bob", f"echo {CLI} | passwd --stdin bob"),
    # ... in JSON text, as a transcript's line holds it
    ('{"command": "printf \'Maple2024!\\\\n\' | sudo -S ls"}', f'{{"command": "printf \'{CLI}\\\\n\' | sudo -S ls"}}'),
    ('{"command": "echo \\"MyPass99\\" | sudo -S ls"}', f'{{"command": "echo \\"{CLI}\\" | sudo -S ls"}}'),
    # sshpass -p, mysql -p, docker login: a password a person built of words and digits
    ("sshpass -p MyPass99 ssh host", f"sshpass -p {CLI} ssh host"),
    ("mysql -u root -phunter2secret shop", f"mysql -u root -p{CLI} shop"),
    ("docker login -u me -p hunter2secret registry.example.com", f"docker login -u me -p {CLI} registry.example.com"),
    # --password X, --password=X after any command
    ("vault login -method=userpass username=bob --password hunter2secret", f"vault login -method=userpass username=bob --password {CLI}"),
    ("./deploy --user admin --password=MyPass99 --env prod", f"./deploy --user admin --password={CLI} --env prod"),
    # a variable named for a secret: export, a command's environment, set, setx, PowerShell
    ("export OPENAI_API_KEY=sk-Maple2024-copper-lantern", f"export OPENAI_API_KEY={VAR}"),
    ("export MY_TOKEN=hunter2secret", f"export MY_TOKEN={VAR}"),
    ("SLACK_BOT_TOKEN='hunter2secret' ./notify.sh", f"SLACK_BOT_TOKEN='{VAR}' ./notify.sh"),
    ("MY_SECRET=hunter2secret ./run.sh", f"MY_SECRET={VAR} ./run.sh"),
    ("env API_TOKEN=hunter2secret ./x", f"env API_TOKEN={VAR} ./x"),
    ("export TOKEN=hunter2secret", f"export TOKEN={VAR}"),
    ("export GOOGLE_CREDENTIALS=hunter2secret", f"export GOOGLE_CREDENTIALS={VAR}"),
    ("export BASIC_AUTH=admin:hunter2secret", f"export BASIC_AUTH={VAR}"),
    ("set API_KEY=hunter2secret", f"set API_KEY={VAR}"),
    ('set "API_KEY=hunter2secret"', f'set "API_KEY={VAR}"'),
    ("setx API_KEY hunter2secret", f"setx API_KEY {VAR}"),
    ('$env:OPENAI_API_KEY = "hunter2secret"', f'$env:OPENAI_API_KEY = "{VAR}"'),
    ('$env:GITHUB_TOKEN="MyPass99"', f'$env:GITHUB_TOKEN="{VAR}"'),
    (f"export ENCRYPTION_KEY={ENCRYPTION}", f"export ENCRYPTION_KEY={VAR}"),
    ("export DB_PASSWD=hunter2secret", f"export DB_PASSWD={PV}"),
    ("set DB_PASSWORD=MyPass99", f"set DB_PASSWORD={PV}"),
    # OpenAI's other key forms, an OpenAI-compatible key
    (f"OPENAI_API_KEY={NONE_KEY} python app.py", f"OPENAI_API_KEY={OPENAI} python app.py"),
    (f"key: {DEEPSEEK}", f"key: {OPENAI}"),
    # URLs: a typed password, a token as the user, a token already redacted stays one marker
    ("postgres://app:hunter2secret@db:5432/app", f"postgres://app:{URL}@db:5432/app"),
    ("mongodb+srv://u:MyPass99@cluster0.abc.mongodb.net/db", f"mongodb+srv://u:{URL}@cluster0.abc.mongodb.net/db"),
    (f"git clone https://{CLONE_TOKEN}@github.com/o/r.git", "git clone https://[REDACTED:url-token]@github.com/o/r.git"),
    ("git clone https://x-access-token:hunter2secret@github.com/o/r.git", f"git clone https://x-access-token:{URL}@github.com/o/r.git"),
    (
        "git clone https://ghp_" + fake(ALNUM, 36, 3105) + "@github.com/o/r.git",
        "git clone https://[REDACTED:github-pat]@github.com/o/r.git",
    ),
    # openssl's -k, a here-document fed to chpasswd (every line of it, the users stay)
    ("openssl enc -aes-256-cbc -k Hunter2Secret99 -in a -out b", f"openssl enc -aes-256-cbc -k {CLI} -in a -out b"),
    ("openssl aes-256-cbc -salt -in a -k 'correct horse 9'", f"openssl aes-256-cbc -salt -in a -k '{CLI}'"),
    ("chpasswd <<EOF\nalice:Tr0ub4dor3x\nbob:zebra77tango\nEOF", f"chpasswd <<EOF\nalice:{CLI}\nbob:{CLI}\nEOF"),
    ("sudo chpasswd <<-'END'\n\tbob:s3cretPassw0rd\nEND\nls", f"sudo chpasswd <<-'END'\n\tbob:{CLI}\nEND\nls"),
    ('{"command": "chpasswd <<EOF\\nalice:Tr0ub4dor3x\\nEOF"}', f'{{"command": "chpasswd <<EOF\\nalice:{CLI}\\nEOF"}}'),
    # a credential in a URL's query, in a custom header on curl's command line
    ("curl 'https://api.example.com/v1/items?access_token=zebra77tango&x=1'", "curl 'https://api.example.com/v1/items?access_token=[REDACTED:url-token]&x=1'"),
    ("GET https://api.example.com/v1/items?id=3&api_key=mango2024", "GET https://api.example.com/v1/items?id=3&api_key=[REDACTED:url-token]"),
    ("https://gitlab.example.com/api/v4/projects?private_token=Copper7lantern", "https://gitlab.example.com/api/v4/projects?private_token=[REDACTED:url-token]"),
    (f'curl -H "X-Custom-Key: {ENCRYPTION}" https://api.x.com', 'curl -H "X-Custom-Key: [REDACTED:auth-header]" https://api.x.com'),
    ("wget --header='X-App-Secret: zebra77tango' https://h", "wget --header='X-App-Secret: [REDACTED:auth-header]' https://h"),
    ("curl -H 'Private-Token: zebra77tango' https://h", "curl -H 'Private-Token: [REDACTED:auth-header]' https://h"),
    # chpasswd (the user stays), openssl's pass:, Windows' net use
    ("echo 'bob:hunter2secret' | chpasswd", f"echo 'bob:{CLI}' | chpasswd"),
    ('echo "bob:MyPass99" | sudo chpasswd', f'echo "bob:{CLI}" | sudo chpasswd'),
    ("printf 'bob:hunter2secret\\n' | chpasswd", f"printf 'bob:{CLI}\\n' | chpasswd"),
    ("chpasswd <<< 'bob:hunter2secret'", f"chpasswd <<< 'bob:{CLI}'"),
    ('{"command": "echo \\"bob:MyPass99\\" | chpasswd"}', f'{{"command": "echo \\"bob:{CLI}\\" | chpasswd"}}'),
    ("openssl enc -aes-256-cbc -pass pass:hunter2secret -in a -out b", f"openssl enc -aes-256-cbc -pass pass:{CLI} -in a -out b"),
    ("openssl pkcs12 -export -passout pass:MyPass99 -out a.p12", f"openssl pkcs12 -export -passout pass:{CLI} -out a.p12"),
    ("openssl rsa -in k.pem -passin 'pass:hunter2secret'", f"openssl rsa -in k.pem -passin 'pass:{CLI}'"),
    ("net use z: \\\\srv\\share hunter2secret /user:bob", f"net use z: \\\\srv\\share {CLI} /user:bob"),
    ("NET USE \\\\srv\\share /user:CORP\\bob MyPass99", f"NET USE \\\\srv\\share /user:CORP\\bob {CLI}"),
    ('{"command": "net use z: \\\\\\\\srv\\\\share hunter2secret /user:bob"}', f'{{"command": "net use z: \\\\\\\\srv\\\\share {CLI} /user:bob"}}'),
    # a Bearer credential a person typed, in an Authorization header
    ("curl -H 'Authorization: Bearer hunter2secret' https://api.example.com", f"curl -H 'Authorization: Bearer {BEARER}' https://api.example.com"),
    ('headers = {"Authorization": "Bearer MyPass99"}', f'headers = {{"Authorization": "Bearer {BEARER}"}}'),
    # a YAML or .env map's "NAME: value", JSON's "NAME": "value"
    ("API_KEY: hunter2secret", f"API_KEY: {VAR}"),
    ("  OPENAI_API_KEY: 'Maple2024-copper'", f"  OPENAI_API_KEY: '{VAR}'"),
    ('{"SLACK_BOT_TOKEN": "hunter2secret"}', f'{{"SLACK_BOT_TOKEN": "{VAR}"}}'),
    # a bare sk- key under 32 characters
    ("key sk-Zq8vT3nLw5Yp2Rk7aB4cXk9m", f"key {OPENAI}"),
    (f"use {SHORT_SK} here", f"use {OPENAI} here"),
    # .netrc, connection strings
    ("machine github.com login bob password hunter2secret", f"machine github.com login bob password {NETRC}"),
    ("machine api.heroku.com\n  login me@example.com\n  password MyPass99\n", f"machine api.heroku.com\n  login me@example.com\n  password {NETRC}\n"),
    ("Server=db;Database=shop;User Id=sa;Password=hunter2secret;", f"Server=db;Database=shop;User Id=sa;Password={CONN};"),
    ('"Data Source=db;Initial Catalog=shop;Uid=sa;Pwd=MyPass99"', f'"Data Source=db;Initial Catalog=shop;Uid=sa;Pwd={CONN}"'),
]

LEFT: list[str] = [
    # variables that hold no secret
    "PWD=/home/x",
    "OLDPWD=/home/y",
    "TOKEN_LIMIT=4096",
    "KEY_PATH=/etc/ssl/k.pem",
    "export MAX_TOKENS=4096",
    "SSH_AUTH_SOCK=/tmp/ssh-XXXX/agent.123",
    "GOOGLE_APPLICATION_CREDENTIALS=/secrets/sa.json",
    "export SORT_KEY=created_at",
    "export CACHE_KEY=v1-deps-linux",
    "export GPG_KEY=ABCDEF12",
    "NEXT_PAGE_TOKEN=CgkIARIFCgM1MDA",
    "export API_KEY=$OPENAI_API_KEY",
    'export GITHUB_TOKEN="$(gh auth token)"',
    "export API_TOKEN=${{ secrets.API_TOKEN }}",
    "export AUTH=none",
    "export NO_AUTH=true",
    "export TOKEN=your-token-here",
    "API_KEY=<your-api-key>",
    "PAD_TOKEN=[PAD]",
    "HF_ORG_TOKEN=api_org_<token>",
    'AZURE_SAS_TOKEN="?sv=2022-11-02&sp=rl&sig=<signature>"',
    # a placeholder in a key's shape: its body counts up, as documentation writes it
    "export OPENAI_API_KEY=sk-abcdefghijklmnopqrstuvwx123456",
    "DATABRICKS_TOKEN=dapi123456789012345678a9bc01234defg5",
    "API_TOKEN=npm_deadbeefdeadbeefdeadbeefdeadbeefdead",
    "STRIPE_SECRET_KEY=sk_test_yoursecretkeyhere",
    "STRIPE_SECRET_KEY=sk_test_abc123abc123abc123abc123abc123",
    # what reads no password from standard input, or is fed none
    "echo hello | sudo tee /etc/motd",
    "echo $SUDO_PASSWORD | sudo -S apt update",
    "echo done | grep -S x",
    "docker login -u ci --password-stdin ghcr.io < token.txt",
    "cat <<< hunter2secret",
    # chpasswd, openssl and net use without a typed password
    "echo 'bob:$PW' | chpasswd",
    "echo bob:changeme | chpasswd",
    "echo 'bob:hunter2secret' | tee users.txt",
    # -k of another command, a here-document no chpasswd reads or one already closed
    "curl -k https://x && ls -k zebra77tango",
    "openssl enc -aes-256-cbc -k $PASSPHRASE -in a",
    "cat <<EOF\nalice:Tr0ub4dor3x\nEOF",
    "chpasswd <<EOF\nalice:$PW\nEOF\nhost:Tr0ub4dor3x",
    # a URL's query without a credential; a key of a header that is not random
    "see https://x.io/a?key=mango2024 and https://x.io/b?page_token=Zk29sLq0Pw81mVn3",
    "the query ?access_token=zebra77tango is not in a URL",
    "https://x.io/cb?access_token=YOUR_TOKEN&api_key=${API_KEY}",
    "curl -H 'Idempotency-Key: order-42' -H 'X-Cache-Key: user-profile' https://x",
    # a scheme's name and version after Bearer, in prose and in a header
    "We use the Bearer OAuth2.0 flow for the API.",
    "Authorization: Bearer OAuth2.0",
    "openssl enc -d -pass env:PASSPHRASE -in a",
    "openssl enc -d -pass file:/run/secrets/pw -in a",
    "openssl pkcs12 -passin pass: -in a.p12",
    "net use z: \\\\srv\\share * /user:bob",
    "net use z: \\\\srv\\share /user:bob /persistent:no",
    "net use z: /delete",
    # placeholders after Bearer; a typed-looking word outside an Authorization header
    "Authorization: Bearer ${TOKEN}",
    "Authorization: Bearer YOUR_TOKEN",
    "Authorization: Bearer xxx",
    "Authorization: Bearer your-token-here",
    "Authorization: Bearer token123",
    "use a Bearer token-based header",
    # NAME: value that is no secret
    "API_KEY: ${{ secrets.X }}",
    "API_KEY: required",
    "API_KEY: your-api-key",
    "OPENAI_API_KEY: the key holds spaces",
    "SECRET_KEY: str = 'x'",
    "API_TOKEN: Optional[str] = None",
    "SORT_KEY: created_at",
    "SSH_KEY: ~/.ssh/id_ed25519",
    "NEXT_PAGE_TOKEN: CgkIARIFCgM1MDA",
    # sk- and a name, or under 20 characters
    "pip install sk-learn-extensions",
    "sk-abcdefghijklmnopqrstuvwx",
    "sk-ThisIsMyVeryOwnKeyName",
    "sk-Zq8vT3nLw5Yp2Rk7",
    # options that hold no password
    "mysql -u root -p hunter2secret",  # -p alone asks; hunter2secret is the database
    "tool --password-file /run/secrets/pw",
    "tool --password $PASSWORD",
    "tool --password required",
    "the --password option is deprecated",
    # passwords written as defaults
    "sshpass -p changeme ssh host",
    "sshpass -p Password1 ssh host",
    "sshpass -p your_password_1 ssh host",
    "PGPASSWORD=mysecretpassword psql",
    # URLs, .netrc and connection strings without one
    "git clone https://deploy-bot@github.com/o/r.git",
    "ssh://git@github.com/o/r.git",
    "https://user:password@example.com/",
    "machine github.com login bob",
    "Server=db;Database=shop;Trusted_Connection=True;",
    "Password=;",
    "2024-05-14 WARN db: connect failed user=app password=changeme host=db",
    "connect failed user=app password=<your-token> host=db",
    # a sentence that names a password, in JSON-escaped text
    '"content": "# Only check cpolar auth if password is available\\n          fi"',
]
# fmt: on


@pytest.mark.parametrize(("text", "expected"), FOUND, ids=_id)
def test_each_command_line_secret_is_redacted(text: str, expected: str) -> None:
    result = redact_text(text)
    assert result.text == expected
    assert redact_text(expected).text == expected  # redacting twice changes nothing


@pytest.mark.parametrize("text", LEFT, ids=_id)
def test_what_holds_no_secret_is_left_alone(text: str) -> None:
    assert redact_text(text) == Redaction(text, {})


# Inputs that would make a careless pattern backtrack: the right answer, at once.
# fmt: off
LONG_RUNS: dict[str, tuple[str, dict[str, int]]] = {
    "echo-pipes": ("echo x | " * 50_000, {}),
    "sudo-flags": ("echo MyPass99 | sudo" + " -k" * 50_000, {}),
    "here-strings": ("<<< " * 100_000, {}),
    "names": ("API_KEY" * 50_000 + "=", {}),
    "assignments": ("A_TOKEN= " * 50_000, {}),
    "netrc": ("login x " * 50_000, {}),
    "connection": ("Password=x;" * 50_000, {}),
    "connection-keys": ("Server=db;Password=MyPass99;" * 20_000, {"connection-string-password": 20_000}),
    "url-users": ("https://" + "a" * 300 + "@" * 10_000, {}),
    "many-variables": ("export MY_TOKEN=hunter2secret\n" * 5_000, {"secret-variable": 5_000}),
    "chpasswd-pipes": ("echo a:b | " * 50_000 + "chpasswd", {}),
    "chpasswd-here": ("chpasswd <<< " * 50_000, {}),
    "here-string-values": ("<<< x " * 50_000, {}),  # one line: the reader is sought 300 back
    "openssl-pass": ("-pass pass:" * 50_000, {}),
    "net-use": ("net use \\\\s /x" * 50_000, {}),
    "yaml-names": ("API_KEY: " * 50_000, {}),
    "bearer-headers": ("Authorization: Bearer " * 50_000, {}),
    "openssl-k": ("openssl " + "-k x " * 50_000, {}),
    "chpasswd-docs": ("chpasswd <<EOF\n" + "a:b\n" * 50_000, {}),
    "chpasswd-doc-lines": ("chpasswd <<EOF\n" + "bob:zebra77tango\n" * 50, {"command-line-password": 50}),
    "url-queries": ("https://h/?" + "&token=x" * 50_000, {}),
    "flag-headers": ("curl " + "-H 'X-Key: x' " * 50_000, {}),
    "many-chpasswd": ("echo 'bob:hunter2secret' | chpasswd\n" * 5_000, {"command-line-password": 5_000}),
}
# fmt: on


@pytest.mark.parametrize(("text", "counts"), LONG_RUNS.values(), ids=LONG_RUNS.keys())
def test_long_adversarial_inputs_are_read_in_linear_time(text: str, counts: dict[str, int]) -> None:
    result = redact_text(text)
    assert dict(result.counts) == counts
    if not counts:
        assert result.text == text


SECRETS = ("hunter2secret", "Maple2024-copper", "MyPass99", "Copper7lantern")
COMMAND = (
    "export DEPLOY_TOKEN=Maple2024-copper"
    " && echo hunter2secret | sudo -S apt install -y libcsv"
    " && echo bob:Copper7lantern | chpasswd"
    " && sshpass -p MyPass99 ssh deploy@10.0.0.5 true"
    " && python -m pytest -q"
)


def test_a_handoff_of_a_transcript_commits_no_command_line_secret(tmp_path: Path) -> None:
    """A Claude Code session whose agent ran a command with three typed secrets goes through
    ``clm-policy handoff --transcript`` (a real process) into a real memory repository: the
    command is in the commit, word for word, and ``git log -p`` holds none of the secrets."""
    source = REPO / "tests" / "fixtures" / "transcripts" / "claude_session.jsonl"
    lines = source.read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):  # the first test run becomes the command with secrets
        entry = json.loads(line)
        content = entry.get("message", {}).get("content")
        if isinstance(content, list) and content and content[0].get("name") == "Bash":
            content[0]["input"]["command"] = COMMAND
            lines[i] = json.dumps(entry)
            break
    transcript = tmp_path / "session.jsonl"
    transcript.write_text("\n".join(lines) + "\n", encoding="utf-8")
    memory = tmp_path / "mem"
    for args in (
        ("init", str(memory)),
        ("handoff", "-m", str(memory), "--transcript", str(transcript), "--format", "json"),
    ):
        done = subprocess.run(
            [sys.executable, "-m", "clm_policy", *args],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr
    history = git(memory, "log", "-p", "--all")
    assert "sudo -S apt install -y libcsv" in history  # the command reached the commit
    assert [secret for secret in SECRETS if secret in history] == []
    assert "[REDACTED:command-line-password]" in history
    assert "[REDACTED:secret-variable]" in history
    assert "bob:[REDACTED:command-line-password] | chpasswd" in history
