"""The package build's one addition to pyproject.toml: the case corpus travels in the wheel
(conformance/corpus/, with CORPUS.json, the digest of every file), so that an installed package
can test a build without a checkout (Note [The corpus] in conformance/data/corpus.py)."""

from __future__ import annotations

import importlib.util
import re
import shutil
from pathlib import Path
from types import ModuleType

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent


def _corpus_files() -> ModuleType:
    """conformance/data/corpus_files.py, loaded by path: nothing is installed yet."""
    spec = importlib.util.spec_from_file_location("corpus_files", HERE / "conformance" / "data" / "corpus_files.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class BuildWithCorpus(build_py):
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return  # an editable install reads the source tree's cases/ itself
        files = _corpus_files()
        source, target = HERE / "cases", Path(self.build_lib) / "conformance" / "corpus"
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__", ".*"))
        text = (HERE / "conformance" / "__init__.py").read_text(encoding="utf-8")
        version = re.search(r'^__version__ = "([^"]+)"', text, re.MULTILINE)
        assert version is not None, "conformance/__init__.py sets no __version__"
        # found first when pytest looks for its configuration from the corpus up: a run of the
        # bundled corpus never takes the settings (addopts, pythonpath, ...) of a project around it
        (target / "pytest.ini").write_text("[pytest]\nminversion = 8.2\n", encoding="utf-8")
        (target / files.MANIFEST_NAME).write_text(files.manifest_text(version.group(1), files.corpus_files(target)),
                                                  encoding="utf-8")


setup(cmdclass={"build_py": BuildWithCorpus})
