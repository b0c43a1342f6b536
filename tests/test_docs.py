"""The documentation cannot rot: the Sphinx site builds with warnings as errors, every public
name is in the API reference, and every Python example of README.md and docs/ runs as written
(issue 32). Needs the docs extra (``pip install -e ".[test,docs]"``, the README's command).

An example that reads ``os.environ["OPTUNA_STORAGE"]`` (a database server's URL, as Optuna's
command line reads it) runs against the tests' PostgreSQL server (``postgres_url``, conftest)
and is marked ``postgres``: it skips where no server can be had, as the other PostgreSQL tests.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import optuna
import pytest

import optuna_gpbandit
from optuna_gpbandit._storage import MULTIPLIERS, read_trial_json

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))
SERVER_URL = 'os.environ["OPTUNA_STORAGE"]'


def _examples() -> list:
    out = []
    for page in PAGES:
        text = page.read_text()
        for m in re.finditer(r"```python\n(.*?)```", text, re.S):
            line = text[: m.start()].count("\n") + 1
            where, code = f"{page.relative_to(ROOT)}:{line}", m.group(1)
            # trial.set_constraint is new in Optuna 5.0: such examples skip on 4.x (conftest.py)
            marks = [pytest.mark.needs_optuna5] if "set_constraint" in code else []
            if SERVER_URL in code:
                marks.append(pytest.mark.postgres)
            out.append(pytest.param(where, code, id=where, marks=marks))
    return out


def test_the_docs_build_with_warnings_as_errors(tmp_path):
    out = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
                          str(ROOT / "docs"), str(tmp_path / "html")],
                         capture_output=True, text=True, timeout=600, check=False)
    assert out.returncode == 0, out.stderr[-5000:]
    assert (tmp_path / "html" / "api.html").exists()


def test_every_public_name_is_in_the_api_reference():
    api = (ROOT / "docs" / "api.md").read_text()
    missing = [n for n in optuna_gpbandit.__all__ if f"optuna_gpbandit.{n}" not in api]
    assert not missing, missing


def test_every_page_is_in_the_table_of_contents():
    index = (ROOT / "docs" / "index.md").read_text()
    pages = [p.stem for p in (ROOT / "docs").glob("*.md") if p.stem != "index"]
    assert [p for p in pages if f"\n{p}\n" not in index] == []


@pytest.mark.parametrize("where,code", _examples())
def test_the_example_runs_as_written(where, code, tmp_path, request):
    script = tmp_path / "example.py"
    script.write_text(code)
    env = dict(os.environ, PYTHONPATH=str(ROOT), MPLBACKEND="Agg")
    url = None
    if SERVER_URL in code:
        url = env["OPTUNA_STORAGE"] = request.getfixturevalue("postgres_url")
        before = set(optuna.get_all_study_names(url))
    try:
        out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                             cwd=tmp_path, env=env, timeout=600, check=False)
    finally:
        if url is not None:  # the session's database: leave no study of the example behind
            for name in set(optuna.get_all_study_names(url)) - before:
                optuna.delete_study(study_name=name, storage=url)
    assert out.returncode == 0, f"{where}:\n{out.stderr[-3000:]}"


def test_the_multipliers_example_returns_the_stored_record(tmp_path, monkeypatch):
    """docs/constraints.md reads the long-term multipliers with ``sampler_record``: its example
    gives the record the sampler stored (in chunks, ``gpbandit:multipliers:0``, ...), after the
    epochs it counts."""
    text = (ROOT / "docs" / "constraints.md").read_text()
    [code] = [c for c in re.findall(r"```python\n(.*?)```", text, re.S) if '["multipliers"]' in c]
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "__main__"}
    exec(compile(code, "docs/constraints.md", "exec"), namespace)
    study, multipliers = namespace["study"], namespace["multipliers"]
    assert isinstance(multipliers, dict)
    assert multipliers == read_trial_json(study.trials[-1], MULTIPLIERS)
    assert multipliers["names"] == ["0"] and len(multipliers["kappa"]) == 1
    assert multipliers["epoch"] == (len(study.trials) - 1) // 5  # full epochs of 5 before it


def test_no_page_reads_a_chunked_record_from_system_attrs():
    """Records stored in chunks (``_storage.write_trial_json``) are not under their own name:
    ``trial.system_attrs["gpbandit:state"]`` is no key. Pages show the readers instead."""
    chunked = r"gpbandit:(params|state|finish|multipliers)"
    pattern = re.compile(rf"system_attrs(\[|\.get\()\s*[\"']{chunked}[\"']")
    pages = PAGES + sorted((ROOT / "examples").glob("*.py")) + [ROOT / "examples" / "README.md"]
    found = [f"{page.relative_to(ROOT)}: {m.group(0)}" for page in pages
             for m in pattern.finditer(page.read_text())]
    assert not found, found
