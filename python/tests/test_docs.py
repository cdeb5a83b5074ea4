"""The Python examples of README.md and docs/python.md run as written."""
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _examples(doc):
    path = os.path.join(ROOT, doc)
    if not os.path.exists(path):
        pytest.skip("%s is not next to the tests" % doc)
    with open(path, encoding="utf-8") as f:
        blocks = re.findall(r"```python\n(.*?)```", f.read(), re.S)
    return [b for b in blocks if "from minitriton import" in b]


@pytest.mark.parametrize("doc", ["README.md", "docs/python.md", "python/README.md"])
def test_examples_run(doc, tmp_path):
    examples = _examples(doc)
    assert examples, doc
    for i, code in enumerate(examples):
        script = tmp_path / ("example%d.py" % i)  # @jit reads the source from a file
        script.write_text(code)
        r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, "%s example %d:\n%s" % (doc, i, r.stderr)
        assert "[[2. 2. 2.]" in r.stdout and "@T.prim_func" in r.stdout
