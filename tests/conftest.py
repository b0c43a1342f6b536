import optuna
import pytest

from optuna_gpbandit import GPTSSampler, GPUCBSampler, IGPUCBSampler

ALL_SAMPLERS = [GPUCBSampler, IGPUCBSampler, GPTSSampler]


@pytest.fixture(autouse=True)
def _quiet_optuna():
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    yield


# ------------------------------------------------------------------ distributed / PostgreSQL
# Multi-process tests (tests/test_distributed.py, test_faults.py, test_grpc_proxy.py) are marked
# ``distributed`` and run by default; ``-m distributed`` selects them, ``-m "not distributed"``
# leaves them out. Their PostgreSQL cases are also marked ``postgres``.
#
# PostgreSQL: ``GPBANDIT_TEST_POSTGRES_URL`` (a SQLAlchemy URL, set by .ci/run) is used if set;
# otherwise a throwaway local server is started (initdb + pg_ctl in a temporary directory, as the
# ``postgres`` user when running as root, on a free port). If neither works the PostgreSQL tests
# skip with the reason; with ``GPBANDIT_TEST_POSTGRES_REQUIRED=1`` (set by .ci/run once it has
# started a server) they fail instead.
import os  # noqa: E402
import subprocess  # noqa: E402


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "distributed: several worker processes share one study (journal file, "
        "PostgreSQL, gRPC storage proxy)"
    )
    config.addinivalue_line("markers", "postgres: needs a PostgreSQL server (postgres_url fixture)")
    config.addinivalue_line(
        "markers", "needs_optuna5: uses trial.set_constraint, FrozenTrial.constraints or "
        "create_trial(constraints=...), new in Optuna 5.0 (skips on 4.x)"
    )


# ------------------------------------------------------------------ Optuna 5.0-only features
# The package admits Optuna 4.3 (pyproject.toml); trial.set_constraint, FrozenTrial.constraints
# and create_trial(constraints=...) are new in 5.0. Tests that use them are marked
# ``needs_optuna5`` and skip on 4.x with the version in the reason; on 5.x (README's test
# command) they run.
OPTUNA_5 = hasattr(optuna.trial.Trial, "set_constraint")


def pytest_runtest_setup(item):
    if not OPTUNA_5 and item.get_closest_marker("needs_optuna5") is not None:
        pytest.skip(f"needs Optuna >= 5.0 (trial.set_constraint, FrozenTrial.constraints, "
                    f"create_trial(constraints=...)); this is Optuna {optuna.__version__}")


def _postgres_unavailable(reason):
    if os.environ.get("GPBANDIT_TEST_POSTGRES_REQUIRED") == "1":
        pytest.fail(f"PostgreSQL required (GPBANDIT_TEST_POSTGRES_REQUIRED=1): {reason}")
    pytest.skip(f"PostgreSQL unavailable: {reason}")


def _mask_password(url):
    import sqlalchemy

    try:
        return sqlalchemy.engine.make_url(url).render_as_string(hide_password=True)
    except Exception:  # noqa: BLE001
        return "<unparsable URL>"


@pytest.fixture(scope="session")
def postgres_url():
    """SQLAlchemy URL of a PostgreSQL database for the session (see the comment above).

    Tests share the database and use unique study names (``unique_study_name``), deleting their
    studies afterwards.
    """
    import importlib.util

    import distributed

    if importlib.util.find_spec("psycopg2") is None:
        _postgres_unavailable("the psycopg2 driver is not installed (pip install -e '.[test]')")
    url = os.environ.get("GPBANDIT_TEST_POSTGRES_URL")
    if url:
        error = distributed.check_postgres(url)
        if error:
            _postgres_unavailable(
                f"cannot connect to GPBANDIT_TEST_POSTGRES_URL={_mask_password(url)}: {error}"
            )
        yield url
        return
    try:
        server = distributed.LocalPostgres.start()
    except (distributed.PostgresUnavailable, OSError, subprocess.SubprocessError) as e:
        _postgres_unavailable(
            f"GPBANDIT_TEST_POSTGRES_URL is not set and no local server could be started: {e}"
        )
    try:
        error = distributed.check_postgres(server.url)
        if error:
            _postgres_unavailable(f"local server started but unreachable: {error}")
        yield server.url
    finally:
        server.stop()


@pytest.fixture
def unique_study_name(request):
    """A study name no other test (or concurrent test run) uses."""
    import re
    import uuid

    stem = re.sub(r"[^A-Za-z0-9]+", "-", request.node.name)[:60]
    return f"gpbandit-{stem}-{uuid.uuid4().hex[:10]}"


@pytest.fixture(params=["journal", pytest.param("postgres", marks=pytest.mark.postgres)])
def shared_storage(request, tmp_path, unique_study_name):
    """(storage spec for worker processes, study name): a journal file, or the session's
    PostgreSQL database (``postgres_url``), whose study is deleted afterwards."""
    if request.param == "journal":
        yield str(tmp_path / "study.journal"), unique_study_name
        return
    import optuna

    url = request.getfixturevalue("postgres_url")
    try:
        yield url, unique_study_name
    finally:
        try:
            optuna.delete_study(study_name=unique_study_name, storage=url)
        except KeyError:
            pass
