# Shared by bin/clustergrade and bin/test: create or refresh the project's
# virtual environment when pyproject.toml changed.  Sourced, not executed.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${CLUSTERGRADE_VENV:-$ROOT/.venv}"
PY="${PYTHON:-python3}"

cg_venv() {
  local extras="$1" stamp want
  want="$extras:$(sha256sum "$ROOT/pyproject.toml" | cut -c1-16)"
  stamp="$VENV/.clustergrade-stamp"
  if [ -x "$VENV/bin/python" ] && [ -f "$stamp" ]; then
    # A dev install also serves the plain command.
    if [ "$(cat "$stamp")" = "$want" ] || { [ -z "$extras" ] && grep -q "^dev:" "$stamp" \
        && [ "$(cut -d: -f2 "$stamp")" = "${want#*:}" ]; }; then
      return 0
    fi
  fi
  if ! "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    echo "clustergrade needs Python 3.11 or newer ($PY is $("$PY" -V 2>&1))" >&2
    exit 2
  fi
  echo "setting up $VENV ..." >&2
  [ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check --upgrade pip >&2
  if [ -n "$extras" ]; then
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check -e "$ROOT[$extras]" >&2
  else
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check -e "$ROOT" >&2
  fi
  echo "$want" > "$stamp"
}
