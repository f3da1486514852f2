"""What starting raosym imports (issue 15): the heavy libraries only where they are used.

``raosym --help`` and ``raosym account`` must not import SymPy or ``scipy.integrate`` (the
stages are imported by ``derive`` and ``generate``), and a generated module imports only
``math`` and NumPy until a function that needs SciPy runs (DESIGN.md, the module contract).
Checked in a fresh interpreter through ``sys.modules``, not by timing (benchmarks/performance.py
prints the start-up times).
"""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import REPOSITORY

GENERATED = REPOSITORY / "generated" / "python"


def imported_after(code: str) -> dict:
    """Which of the heavy modules a fresh interpreter holds after running ``code``."""
    probe = (f"{code}\nimport json, sys\n"
             "print(json.dumps({name: name in sys.modules for name in "
             "('sympy', 'scipy', 'scipy.integrate', 'scipy.special', 'mpmath')}))")
    result = subprocess.run([sys.executable, "-c", probe], cwd=REPOSITORY, capture_output=True,
                            text=True, check=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_help_imports_neither_sympy_nor_scipy():
    modules = imported_after("import contextlib, io\nfrom raosym import cli\n"
                             "with contextlib.redirect_stdout(io.StringIO()):\n"
                             "    try:\n        cli.main(['--help'])\n"
                             "    except SystemExit as stop:\n        assert stop.code == 0\n")
    assert not modules["sympy"] and not modules["scipy"], modules


def test_account_imports_neither_sympy_nor_scipy_integrate():
    modules = imported_after("import contextlib, io\nfrom raosym import cli\n"
                             "out = io.StringIO()\n"
                             "with contextlib.redirect_stdout(out):\n"
                             "    status = cli.main(['account', '--mechanism', 'gaussian', "
                             "'--sigma', '2', '--repeat', '3', '--delta', '1e-6'])\n"
                             "assert status == 0 and 'Rao-DP' in out.getvalue(), out.getvalue()\n")
    assert not modules["sympy"] and not modules["scipy.integrate"], modules


def test_generated_modules_import_scipy_only_when_a_function_needs_it():
    modules = imported_after(f"import sys\nsys.path.insert(0, {str(GENERATED)!r})\n"
                             "import gamma, beta, von_mises, student_t_shape\n")
    assert not any(modules.values()), modules
    # The numeric distance imports SciPy when it runs, and works.
    modules = imported_after(f"import sys\nsys.path.insert(0, {str(GENERATED)!r})\n"
                             "import gamma\nassert gamma.rao_distance((2.0, 1.5), (3.5, 0.7)) > 0\n")
    assert modules["scipy.integrate"] and not modules["sympy"], modules


def test_the_accounting_package_imports_no_sympy():
    """``raosym.accounting`` (issue 13): every module of it, without SymPy, mpmath or SciPy
    (SciPy is imported by the conversion and the calibration when they run)."""
    modules = imported_after("import raosym.accounting\n"
                             "from raosym.accounting import calibrate, mechanisms, rao, rdp, "
                             "releases\n")
    assert not any(modules.values()), modules


def test_the_accounting_commands_help_imports_no_sympy():
    for command in ("account", "calibrate"):
        modules = imported_after("import contextlib, io\nfrom raosym import cli\n"
                                 "with contextlib.redirect_stdout(io.StringIO()):\n"
                                 "    try:\n"
                                 f"        cli.main([{command!r}, '--help'])\n"
                                 "    except SystemExit as stop:\n"
                                 "        assert stop.code == 0\n")
        assert not modules["sympy"] and not modules["scipy"], (command, modules)


def test_the_probe_sees_sympy_where_it_is_imported():
    """The probe can fail: the derive stage's records import SymPy, and it says so."""
    assert imported_after("from raosym.derive import steps")["sympy"]
