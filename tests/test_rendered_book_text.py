"""The text of the book as a reader meets it in the browser: results numbered by chapter with the paper's number
apart, no self-check answer shown outside a solution, display formulas that fit the column.

Browser tests drive Debian's Chromium (``tests/conftest.py``); the build and the helpers are in ``tests/rendered.py``.
"""

from __future__ import annotations

import re

import pytest

from rendered import ALL_PAGES, APPENDICES, CHAPTERS


@pytest.mark.parametrize("page", CHAPTERS + APPENDICES)
def test_results_are_numbered_by_chapter_with_the_papers_number_apart(page, visit):
    tab = visit(page, shared=True).tab
    match = re.search(r"/(\d\d)_|/appendix_([a-z])_", page)
    prefix = f"{int(match.group(1))}." if match.group(1) else f"{match.group(2).upper()}."
    captions = tab.locator("div.admonition p.admonition-title span.caption-number").all_inner_texts()
    assert captions, f"{page}: no numbered result"
    for caption in captions:
        number = caption.split()[-1]
        assert number.startswith(prefix), f"{page}: {caption!r} is not numbered within its chapter ({prefix})"
    titles = tab.locator("div.admonition p.admonition-title").all_inner_texts()
    assert not [t for t in titles if "(paper," in t], f"{page}: a title still holds '(paper, ...)'"
    tags = tab.locator("p.admonition-title .paper-ref").all_inner_texts()
    assert all(re.fullmatch(r"paper: .+", t) for t in tags)
    if re.search(r"/0[1-6]_", page):              # the chapters that follow the paper
        assert tags, f"{page}: no result carries the paper's number"


def _accepted(exercise, value: float) -> bool:
    """Whether :func:`perfpriv.exercises.check` would accept ``value`` (its own tolerance rule)."""
    import math

    return math.isfinite(value) and abs(value - exercise.answer) <= exercise.atol + exercise.rtol * abs(exercise.answer)


#: the text of the page outside solution blocks, folded code included (one click shows it); a typeset
#: formula counts with the text of its MathML (the numbers of "$F_{100} = 0.2196$" are drawn by CSS)
_TEXT_OUTSIDE_SOLUTIONS = """() => {
  const root = (document.querySelector('main article') || document.body).cloneNode(true);
  root.querySelectorAll('div.solution, script, style').forEach(e => e.remove());
  root.querySelectorAll('mjx-container').forEach(c => {
    const mml = c.querySelector('mjx-assistive-mml');
    c.replaceWith(' ' + (mml ? mml.textContent : '') + ' ');
  });
  return root.textContent;
}"""


@pytest.mark.parametrize("page", ["book/intro"] + CHAPTERS + APPENDICES)
def test_no_self_check_answer_is_shown_outside_a_solution(page, visit):
    from perfpriv import exercises

    text = visit(page, shared=True).tab.evaluate(_TEXT_OUTSIDE_SOLUTIONS)
    shown = []
    for exercise_id, exercise in exercises.EXERCISES.items():
        # a self-check call, or its printed verdict, with an accepted value
        for match in re.finditer(re.escape(exercise_id) + r"""['"]?\s*,\s*([-+0-9.eE]+)""", text):
            try:
                value = float(match.group(1))
            except ValueError:
                continue
            if _accepted(exercise, value):
                shown.append(f"{exercise_id}: check call with {match.group(1)}")
        if re.search(re.escape(exercise_id) + r":\s*correct", text):
            shown.append(f"{exercise_id}: a 'correct' verdict")
    # the answer printed as a bare number (a table, a printed result, the prose) by the chapter that asks for it
    chapter = re.search(r"/(\d\d)_", page)
    own = {i: e for i, e in exercises.EXERCISES.items() if chapter and i.startswith(f"ch{chapter.group(1)}-")}
    for token in set(_NUMBER.findall(text)):
        shown += [f"{i}: the number {token} is printed" for i, e in own.items() if _prints_answer(token, e)]
    assert not shown, f"{page}: answers visible outside solutions:\n" + "\n".join(sorted(shown))


#: a number as printed in text or tables (not a piece of an identifier, a version or a longer number)
_NUMBER = re.compile(r"(?<![\w.])[-−]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w]|\.\d)")


def _prints_answer(token: str, exercise) -> bool:
    """Whether the printed number ``token`` gives away ``exercise``'s answer.

    It does when :func:`perfpriv.exercises.check` would accept it and it is the answer written
    to the token's own precision (within one unit of its last digit): ``0.2143`` or ``0.214``
    for 0.21428..., not ``0.2135``. Round answers (at most two significant digits, such as
    0.5, 20 or 1.0) are left to the self-check calls above: a bare 0.5 or 20 in a chapter is a
    parameter far more often than an answer, and cannot be told apart from one.
    """
    import math

    answer = exercise.answer
    if not math.isfinite(answer) or float(f"{answer:.2g}") == answer:
        return False
    mantissa, _, exponent = token.replace("−", "-").lower().partition("e")
    digits = mantissa.lstrip("-").replace(".", "").lstrip("0")
    if "." not in mantissa:
        digits = digits.rstrip("0")
    if len(digits) < 3:                       # 0.52, 300: a setting, not a computed answer
        return False
    value = float(token.replace("−", "-"))
    decimals = len(mantissa.partition(".")[2])
    unit = 10.0 ** (int(exponent or 0) - decimals)
    return _accepted(exercise, value) and abs(value - answer) <= unit


#: display formulas whose typeset width exceeds the width of their container (page at 1280 px)
_WIDE_FORMULAS = """() => [...document.querySelectorAll('mjx-container[display="true"]')]
  .filter(c => c.getClientRects().length)
  .map(c => {
    const box = c.closest('div.math, .math') || c.parentElement;
    const math = c.querySelector('mjx-math') || c;
    const item = window.MathJax && MathJax.startup && MathJax.startup.document
      ? MathJax.startup.document.getMathItemsWithin(c)[0] : null;
    return [math.getBoundingClientRect().width, Math.min(box.clientWidth, c.clientWidth || box.clientWidth),
            item ? item.math : c.textContent.slice(0, 80)];
  })
  .filter(([width, room]) => width > room + 1)"""


@pytest.mark.parametrize("page", ALL_PAGES)
def test_display_formulas_fit_the_text_column_at_1280_px(page, visit):
    tab = visit(page, shared=True, viewport=(1280, 900)).tab
    wide = tab.evaluate(_WIDE_FORMULAS)
    assert not wide, f"{page}: {len(wide)} display formulas wider than the column:\n" + "\n".join(
        f"  {width:.0f} px in {room:.0f} px: {' '.join(tex.split())[:160]}" for width, room, tex in wide)
