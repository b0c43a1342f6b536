"""The parallel-workers example as a user runs it on a new SQLite file (issue 61): it creates the
study once before its 4 worker processes start, so none of them crashes in Optuna's schema
set-up and every trial completes."""

import re
import subprocess
import sys
from pathlib import Path

import optuna
import pytest
from optuna.trial import TrialState

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.distributed
def test_parallel_workers_example_on_a_new_sqlite_file(tmp_path):
    url = f"sqlite:///{tmp_path / 'study.db'}"
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "parallel_workers.py"), "--storage", url,
         "--trials-per-worker", "2"],
        capture_output=True, text=True, cwd=tmp_path, timeout=900, check=False)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "Traceback" not in out.stderr, out.stderr[-3000:]
    assert re.search(r"failed workers: 0\b", out.stdout), out.stdout
    study = optuna.load_study(study_name="gpbandit-parallel-gbc", storage=url)
    assert [t.state for t in study.trials] == [TrialState.COMPLETE] * 8  # 4 workers x 2
