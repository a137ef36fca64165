"""The library never imports the platform; the SDK never imports the server; without the extra,
the server says how to install it."""

from __future__ import annotations

import subprocess
import sys

SERVER_MODULES = ("fastapi", "starlette", "sqlalchemy", "alembic", "uvicorn", "psycopg", "re2")


def run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


def test_library_does_not_import_the_platform():
    done = run(
        "import sys\n"
        "import assay\n"
        "from assay import evaluate, EvaluationDataset, ExactMatch\n"
        "data = EvaluationDataset.from_list([{'user_input': 'q', 'response': 'a', 'reference': 'a'}])\n"
        "result = evaluate(data, metrics=[ExactMatch()], show_progress=False)\n"
        "import assay.cli.app\n"
        f"bad = [m for m in sys.modules if m.startswith('assay.platform') or m.split('.')[0] in {SERVER_MODULES!r}]\n"
        "print(bad)\n"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_sdk_does_not_import_the_server():
    done = run(
        "import sys\n"
        "import assay.platform as ragmetrics\n"
        "ragmetrics.Criteria(name='c', output_type='bool', header='h')\n"
        f"print([m for m in sys.modules if m.startswith('assay.platform.server') or m.split('.')[0] in {SERVER_MODULES[:-1]!r}])\n"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_missing_extra_names_the_install_line():
    done = run(
        "import sys\n"
        "sys.modules['fastapi'] = None\n"
        "try:\n"
        "    import assay.platform.server\n"
        "except ImportError as exc:\n"
        "    print(type(exc).__name__, exc)\n"
    )
    assert "MissingDependency" in done.stdout and "pip install 'assay[platform]'" in done.stdout
    cli = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; sys.modules['uvicorn'] = None; sys.argv = ['assay', 'serve']\n"
            "from assay.cli.app import main; main()",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert cli.returncode == 2 and "pip install 'assay[platform]'" in cli.stderr
    assert "Traceback" not in cli.stderr
