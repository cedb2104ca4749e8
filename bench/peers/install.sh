#!/usr/bin/env bash
# Create one virtualenv per peer framework under .bench-venvs/<name> and install its pinned
# closure from bench/peers/requirements-<name>.txt. Idempotent: a venv whose stamp file matches
# the hash of its requirements (and the interpreter version) is left alone.
#
# Usage: bash bench/peers/install.sh [name ...]     (default: all peers)
#        PYTHON=python3.11 bash bench/peers/install.sh
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venvs="$root/.bench-venvs"
python="${PYTHON:-python3}"
peers=("$@")
if [ ${#peers[@]} -eq 0 ]; then
  peers=(openai-agents langgraph autogen strands adk)
fi

mkdir -p "$venvs"
for name in "${peers[@]}"; do
  req="$here/requirements-$name.txt"
  if [ ! -f "$req" ]; then
    echo "install.sh: no $req" >&2
    exit 1
  fi
  venv="$venvs/$name"
  stamp_file="$venv/.bench-stamp"
  want="$(sha256sum "$req" | cut -d' ' -f1) $("$python" -c 'import sys; print(sys.version.split()[0])')"
  if [ -f "$stamp_file" ] && [ "$(cat "$stamp_file")" = "$want" ]; then
    echo "install.sh: $name up to date ($venv)"
    continue
  fi
  echo "install.sh: installing $name into $venv"
  rm -f "$stamp_file"
  if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
  fi
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$req"
  "$venv/bin/python" -m pip check
  echo "$want" > "$stamp_file"
done
echo "install.sh: done"
