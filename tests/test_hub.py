"""The OptunaHub package in ``hub/samplers/gp_bandit/`` (issue 48): it loads from any working
directory with an absolute ``registry_root``, re-exports every sampler and settings class of
``optuna_gpbandit.__all__``, and follows the registry's rules (optuna/optunahub-registry:
``template/``, ``optunahub-registry/header_confirm.py``, the ruff settings of its
``pyproject.toml``; the tutorial "How to Register Your Package with OptunaHub"). The README's
Python blocks and ``example.py`` run as written, with ``optunahub.load_module`` (which needs
the published package) answered from the local copy."""

import inspect
import re
import runpy
from pathlib import Path

import optuna
import optunahub
import pytest
import yaml

import optuna_gpbandit
from optuna_gpbandit import sampler_record

HUB = Path(__file__).resolve().parents[1] / "hub"
PACKAGE = HUB / "samplers" / "gp_bandit"
README = (PACKAGE / "README.md").read_text()
SAMPLERS = ["GPUCBSampler", "IGPUCBSampler", "GPTSSampler", "ConstrainedGPUCBSampler",
            "GPUCBCPDSampler"]


def _load():
    return optunahub.load_local_module("samplers/gp_bandit", registry_root=str(HUB))


def _front_matter():
    match = re.match(r"---\n(.*?)\n---\n", README, re.S)
    assert match, "README.md must open with a front matter block between two '---' lines"
    return yaml.safe_load(match.group(1))


def _sections():
    return re.findall(r"^## (.+)$", README, re.M)


def _section(title):
    return README.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def _python_blocks():
    return re.findall(r"^```python\n(.*?)^```$", README, re.M | re.S)


def _user_classes():
    """Every sampler or settings class of ``optuna_gpbandit.__all__``: its classes but the
    report's result classes (functions, the report module and ``__version__`` are left out)."""
    names = []
    for name in optuna_gpbandit.__all__:
        obj = getattr(optuna_gpbandit, name)
        if inspect.isclass(obj) and not obj.__module__.startswith("optuna_gpbandit.report"):
            names.append(name)
    return names


@pytest.fixture
def published(monkeypatch, tmp_path):
    """``optunahub.load_module("samplers/gp_bandit")`` as it will answer once the package is in
    the registry: the local copy, loaded from an unrelated working directory. Also sets the
    shell variable the README's local-loading block reads."""

    def load_module(package, **kwargs):
        assert package == "samplers/gp_bandit" and not kwargs, (package, kwargs)
        return _load()

    monkeypatch.setattr(optunahub, "load_module", load_module)
    monkeypatch.setenv("GP_BANDIT_HUB", str(HUB))
    monkeypatch.chdir(tmp_path)


def test_loads_from_any_directory_and_runs_a_study(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    module = _load()
    assert module.GPUCBSampler is optuna_gpbandit.GPUCBSampler
    study = optuna.create_study(sampler=module.GPUCBSampler(seed=0))
    study.optimize(lambda t: (t.suggest_float("x", -5.0, 5.0) - 2.0) ** 2, n_trials=6)
    assert [t.state for t in study.trials] == [optuna.trial.TrialState.COMPLETE] * 6
    # five start-up trials (1 parameter: at least 5), then one the GP chose
    assert [sampler_record(t) is None for t in study.trials] == [True] * 5 + [False]


def test_a_relative_registry_root_is_not_what_we_document(tmp_path, monkeypatch):
    # why README gives an absolute path: a relative one resolves against the working directory
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError):
        optunahub.load_local_module("samplers/gp_bandit", registry_root="hub")
    assert not re.search(r"registry_root\s*=\s*['\"]", README)


def test_every_sampler_and_settings_class_is_exported():
    module = _load()
    wanted = _user_classes()
    assert set(SAMPLERS) <= set(wanted)
    assert {"GPModel", "AcquisitionSearch", "Hallucinate", "FailedTrials", "Theorem1",
            "InfoGainWidth", "ChangeDetection", "LongTermConstraints"} <= set(wanted)
    assert len(module.__all__) == len(set(module.__all__))
    assert sorted(module.__all__) == sorted(wanted)
    for name in module.__all__:
        assert getattr(module, name) is getattr(optuna_gpbandit, name), name
    for name in SAMPLERS:
        assert issubclass(getattr(module, name), optuna.samplers.BaseSampler)


def test_every_exported_class_is_named_in_readme_apis():
    apis = _section("APIs")
    missing = [name for name in _load().__all__ if f"`{name}" not in apis
               and not re.search(rf"[ (=]{name}\(", apis)]
    assert not missing, missing


def test_the_template_files_are_there():
    for name in ("__init__.py", "README.md", "LICENSE", "requirements.txt", "example.py"):
        assert (PACKAGE / name).is_file(), name
    license_text = (PACKAGE / "LICENSE").read_text()
    assert license_text.startswith("MIT License") and "<COPYRIGHT HOLDER>" not in license_text
    requirements = [line.strip() for line in (PACKAGE / "requirements.txt").read_text().splitlines()
                    if line.strip() and not line.startswith("#")]
    assert requirements == ["optuna_gpbandit"]


def test_readme_front_matter_follows_the_registry():
    meta = _front_matter()
    for key in ("author", "title", "description", "tags", "optuna_versions", "license"):
        assert meta.get(key) not in (None, "", []), key
    for key in ("author", "title", "description", "license"):
        assert isinstance(meta[key], str), key
    assert all(isinstance(v, str) for v in meta["tags"] + meta["optuna_versions"])
    assert "sampler" in meta["tags"]  # a package under samplers/ must carry the tag
    assert meta["license"] == "MIT License"
    assert meta["title"] not in SAMPLERS  # a human-readable title, not a class name
    assert "\n" not in meta["description"].strip()
    assert all(re.fullmatch(r"\d+\.\d+\.\d+", v) for v in meta["optuna_versions"])


def test_readme_has_the_template_sections_and_no_html():
    sections = _sections()
    assert sections == ["Abstract", "APIs", "Installation", "Example", "Others"], sections
    assert not re.search(r"<[A-Za-z!/][^>]*>", README)  # the registry strips HTML tags


def test_examples_load_from_the_registry_not_a_local_path():
    example = (PACKAGE / "example.py").read_text()
    for text in (_section("Example"), example):
        assert 'load_module("samplers/gp_bandit")' in text or \
            'load_module(package="samplers/gp_bandit")' in text
        assert "load_local_module" not in text and "repo_owner" not in text
    # the only local loading shown is the documented one, with an absolute root from the shell
    local = [b for b in _python_blocks() if "load_local_module" in b]
    assert len(local) == 1 and 'os.environ["GP_BANDIT_HUB"]' in local[0]
    assert '$PWD/hub' in _section("Installation")
    assert "pip install -e /" not in README and "/path/to" not in README


@pytest.mark.parametrize("index", range(len(_python_blocks())))
def test_readme_python_block_runs(index, published):
    exec(compile(_python_blocks()[index], f"hub README block {index}", "exec"), {})


def test_example_py_runs(published, capsys):
    runpy.run_path(str(PACKAGE / "example.py"), run_name="__main__")
    out = capsys.readouterr()
    assert "'x'" in out.out and "registry" not in out.err


def test_example_py_says_what_to_do_while_the_package_is_not_in_the_registry(
        monkeypatch, tmp_path, capsys):
    # What load_module raises for a package the registry lacks (its sparse checkout has no such
    # folder to move into the cache); without network it raises git's error instead.
    def load_module(package, **kwargs):
        raise FileNotFoundError(2, "No such file or directory", f"package/{package}")

    monkeypatch.setattr(optunahub, "load_module", load_module)
    monkeypatch.chdir(tmp_path)
    namespace = runpy.run_path(str(PACKAGE / "example.py"), run_name="__main__")
    out = capsys.readouterr()
    assert "not in the OptunaHub registry yet" in out.err
    assert "'Loading the package from a checkout'" in out.err
    assert "\n### Loading the package from a checkout\n" in README  # the section it names
    assert "FileNotFoundError" in out.err
    assert namespace["module"] is optuna_gpbandit and "'x'" in out.out
    assert len(namespace["study"].trials) == 30


def test_python_files_keep_the_registry_import_style():
    # ruff with the registry's settings (line-length 99; isort: force-single-line,
    # force-sort-within-sections, lines-after-imports 2), checked here without ruff
    for path in PACKAGE.glob("*.py"):
        lines = path.read_text().splitlines()
        assert all(len(line) <= 99 for line in lines), path.name
        imports = [i for i, line in enumerate(lines) if line.startswith(("import ", "from "))]
        assert imports, path.name
        for i in imports:
            assert "," not in lines[i] and "(" not in lines[i], lines[i]
        last = imports[-1]
        assert lines[last + 1:last + 4] == ["", "", lines[last + 3]] and lines[last + 3], path.name
    init = (PACKAGE / "__init__.py").read_text()
    names = re.findall(r"^from optuna_gpbandit import (\w+)$", init, re.M)
    assert names == sorted(names, key=str.lower) and len(names) == len(_user_classes())
