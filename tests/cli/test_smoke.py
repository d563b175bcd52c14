from conftest import invoke


def test_decide_shortcut() -> None:
    result = invoke("decide", "--tokens", "260000", "--format", "json")
    assert result.exit_code == 0, result.stderr
    assert '"action": "compact"' in result.stdout
