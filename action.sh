# Helpers of action.yml's steps, sourced by them (not run on its own): report a problem as a
# GitHub annotation, check the format input, and run clm-policy so that its usage errors
# (exit 2: no such path, no policy files, a bad option) become annotations too.
# shellcheck shell=bash

# escape TEXT: TEXT as the message of a workflow command
escape() {
  local s=${1//'%'/'%25'}
  s=${s//$'\r'/'%0D'}
  s=${s//$'\n'/'%0A'}
  printf '%s' "$s"
}

# one_line TEXT: TEXT on one line for the log, no workflow command in it (as clm-policy's
# printer: a newline or carriage return shown as \n or \r, the first # of ##[ escaped)
one_line() {
  local s=${1//$'\r'/'\r'}
  s=${s//$'\n'/'\n'}
  s=${s//'##['/'\u0023#['}
  printf '%s' "${s//'##vso['/'\u0023#vso['}"
}

# fail MESSAGE: an error annotation, and exit 2
fail() {
  printf '::error title=clm-policy::%s\n' "$(escape "$1")"
  printf 'clm-policy action: %s\n' "$(one_line "$1")" >&2
  exit 2
}

# wants FORMAT FORMATS: whether the space-separated FORMATS hold FORMAT
wants() {
  local - word
  set -f
  for word in $2; do
    [ "$word" = "$1" ] && return 0
  done
  return 1
}

# check_formats FORMATS: each one known, else fail
check_formats() {
  local - word
  set -f
  for word in $1; do
    case "$word" in
      github | sarif | junit) ;;
      *) fail "unknown format '$word' (expected: github, sarif, junit)" ;;
    esac
  done
}

# run_clm WHAT COMMAND...: run COMMAND; its standard error is shown, and on exit 2 each of
# its lines is an error annotation titled "clm-policy WHAT". Returns COMMAND's status.
run_clm() {
  local what=$1 err code=0 line
  shift
  err=$(mktemp)
  "$@" 2>"$err" || code=$?
  cat "$err" >&2
  if [ "$code" -eq 2 ]; then
    while IFS= read -r line || [ -n "$line" ]; do
      [ -z "$line" ] || printf '::error title=clm-policy %s::%s\n' "$what" "$(escape "$line")"
    done <"$err"
  fi
  rm -f "$err"
  return "$code"
}
