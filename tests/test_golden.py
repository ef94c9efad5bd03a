"""Each corpus kernel's translation is checked in (tests/golden/NAME.cu); any change to the output shows in review.

Regenerate after an intended change with:  python3 -m pytest tests/test_golden.py --update-golden
"""

from pathlib import Path

import pytest

from translator import translate_file
from corpus_harness import LLM_ONLY

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).resolve().parent / "golden"
# LLM_ONLY: the LLM backend's corpus (tests/test_llm.py), not translated by the rules
CORPUS = sorted(p for p in (ROOT / "kernels").glob("*.py") if p.stem not in LLM_ONLY)


@pytest.mark.parametrize("path", CORPUS, ids=[p.stem for p in CORPUS])
def test_translation_matches_golden(path, request):
    text = translate_file(path)
    golden = GOLDEN / f"{path.stem}.cu"
    if request.config.getoption("--update-golden"):
        golden.write_text(text)
        return
    assert golden.exists(), f"no golden file for {path.name}: run pytest --update-golden"
    expected = golden.read_text()
    if text != expected:
        import difflib

        diff = "".join(difflib.unified_diff(expected.splitlines(True), text.splitlines(True),
                                            f"golden/{golden.name}", "translation", n=2))
        pytest.fail(f"{path.name} translates differently from its golden file:\n{diff[:4000]}")


def test_every_golden_file_has_a_kernel():
    stale = [g.name for g in GOLDEN.glob("*.cu") if not (ROOT / "kernels" / f"{g.stem}.py").exists()]
    assert not stale, f"golden files without a corpus kernel: {stale}"


def test_translation_is_deterministic():
    path = ROOT / "kernels" / "matmul.py"
    assert translate_file(path) == translate_file(path)
