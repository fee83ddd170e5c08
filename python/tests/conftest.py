"""pytest setup: the repository root (examples/) and the DSL examples (examples/python/) for the tests.
The tests import the installed `tileasm` package (tools/dev test installs it into a venv first)."""
import os
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "examples", "python"))

if os.environ.get("TILEASM_TEST_INSTALLED"):
    import tileasm
    # tools/dev test: the package under test is the pip-installed one, with its own libtileasm.
    assert not os.path.abspath(tileasm.__file__).startswith(os.path.join(ROOT, "python")), tileasm.__file__
    assert "TILEASM_LIB" not in os.environ
