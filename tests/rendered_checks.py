"""The checks of the rendered book in the browser, page by page: each test module ``test_rendered_book_browser_*.py``
runs all of them on its share of the pages, so that a page is loaded and typeset once for every check.

A page opened in headless Chromium (``tests/conftest.py``: ``visit(page, shared=True)``) is read by the checks
below in the order they are written (``pytest_collection_modifyitems`` sorts a module's tests page by page):
the checks that only read the page come first, those that change it (move the sliders and put them back, open
the folded proofs and solutions, mark the kernel ready) last. ``PAGE_SHARE = (k, n)`` in a test module
gives it the pages whose position in ``rendered.ALL_PAGES`` is k modulo n (``pytest_generate_tests`` in
``tests/conftest.py``); the checks that need no browser are in ``test_rendered_book_html.py``.

What is checked: every page offline, its formulas typeset with no raw TeX left, no console error, no missing
file; display formulas inside the column at 1280 px; results numbered by chapter with the paper's number apart;
no self-check answer outside a solution; alt texts that describe every image (and the live explorer's figure);
no critical or serious axe-core violation; the live explorer's stored state and the precomputed explorer, which
answers every slider position offline; the chapters' figures, folded proofs and solutions, launch buttons; the
note that the live explorer needs a kernel; a screenshot of every page.
"""

from __future__ import annotations

import json
import re

import pytest

from rendered import ALL_PAGES, APPENDICES, CHAPTERS, EXPLORER_PAGES, RAW_TEX, VISIBLE_TEXT

__all__ = [
    "test_page_renders_offline_with_its_formulas_and_no_errors",
    "test_display_formulas_fit_the_text_column_at_1280_px",
    "test_results_are_numbered_by_chapter_with_the_papers_number_apart",
    "test_no_self_check_answer_is_shown_outside_a_solution",
    "test_every_image_has_an_alt_text_that_describes_it",
    "test_live_explorer_state_renders_with_full_sliders_and_a_figure_inside_its_frame",
    "test_axe_finds_no_critical_or_serious_violation",
    "test_precomputed_explorer_answers_its_sliders_offline",
    "test_chapter_has_figures_blocks_exercises_and_launch_buttons",
    "test_a_visible_note_says_that_the_live_explorer_needs_a_kernel",
    "test_every_page_of_the_share_left_a_screenshot",
]


def on_pages(pages):
    """The pages a check applies to (the test module runs it on its share of them, ``tests/conftest.py``)."""
    def mark(check):
        check.pages = list(pages)
        return check
    return mark


_PATH_LIKE = re.compile(r"\.(?:png|jpe?g|gif|svg|webp)\b|_images/|^\.\.?/|^[\w./-]+$", re.I)


#: axe-core rules that the book cannot satisfy without forking an upstream package: rule -> reason
AXE_ALLOWED: dict[str, str] = {}




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


@on_pages(ALL_PAGES)
def test_page_renders_offline_with_its_formulas_and_no_errors(page, visit, screenshot_dir):
    v = visit(page, shared=True)
    tab = v.tab
    assert v.response is not None and v.response.ok, f"{page}: HTTP {v.response and v.response.status}"
    assert tab.title().strip(), f"{page}: empty title"
    assert tab.locator("main h1").first.inner_text().strip(), f"{page}: no h1 heading"
    for text in tab.locator(".cell_output").all_inner_texts():
        assert "Traceback (most recent call last)" not in text, f"{page}: a cell output holds a traceback"
        assert not re.search(r"^\w*(Error|Exception):", text, flags=re.M), f"{page}: a cell output holds an error"
    assert tab.locator(".output.traceback, .output.error").count() == 0
    # every formula typeset, none left as TeX in the text
    formulas = tab.locator("span.math, div.math").count()
    typeset = tab.locator("span.math mjx-container, div.math mjx-container").count()
    assert typeset == formulas, f"{page}: {formulas - typeset} of {formulas} formulas not typeset"
    raw = [m.group(0) for m in RAW_TEX.finditer(tab.evaluate(VISIBLE_TEXT))]
    assert not raw, f"{page}: raw TeX in the text: {raw[:8]}"
    assert not v.problems(), f"{page}: " + "; ".join(v.problems()[:8])
    tab.screenshot(path=str(screenshot_dir / f"{page.replace('/', '_')}.png"), full_page=False)


@on_pages(ALL_PAGES)
def test_display_formulas_fit_the_text_column_at_1280_px(page, visit):
    tab = visit(page, shared=True, viewport=(1280, 900)).tab
    wide = tab.evaluate(_WIDE_FORMULAS)
    assert not wide, f"{page}: {len(wide)} display formulas wider than the column:\n" + "\n".join(
        f"  {width:.0f} px in {room:.0f} px: {' '.join(tex.split())[:160]}" for width, room, tex in wide)


@on_pages(CHAPTERS + APPENDICES)
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


@on_pages(["book/intro"] + CHAPTERS + APPENDICES)
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


@on_pages(ALL_PAGES)
def test_every_image_has_an_alt_text_that_describes_it(page, visit):
    tab = visit(page, shared=True).tab
    images = tab.locator("img").evaluate_all(
        "els => els.map(e => [e.getAttribute('alt'), (e.getAttribute('src') || '').slice(0, 80)])")
    missing = [src for alt, src in images if alt is None or not alt.strip()]
    assert not missing, f"{page}: {len(missing)} images without alt text: {missing[:5]}"
    pathlike = [alt for alt, _ in images if _PATH_LIKE.search(alt.strip()) and len(alt.split()) < 3]
    assert not pathlike, f"{page}: alt texts that are a path or a file name: {pathlike[:5]}"
    if page in EXPLORER_PAGES:    # the figures of pages with explorers: a sentence, not a label
        short = [alt for alt, src in images if src.startswith(("../_images", "data:")) and len(alt.split()) < 6]
        assert not short, f"{page}: figure alt texts too short to say what they show: {short[:5]}"
        # the live explorer's figure: the explorer's own description (perfpriv.widgets.Explorer.alt, copied from
        # its hidden .pp-figure-alt element by book/_static/perfpriv.js), naming its title and slider values
        explorers = tab.locator(".jupyter-widgets.widget-vbox:has(.widget-output img)").evaluate_all(
            """els => els.filter(box => !box.parentElement.closest('.jupyter-widgets.widget-vbox')).map(box => [
                 (box.querySelector('.widget-html b') || {}).textContent || '',
                 [...box.querySelectorAll('.widget-output img')].map(img => img.getAttribute('alt')),
                 (box.querySelector('.pp-figure-alt') || {}).textContent || ''])""")
        assert explorers, f"{page}: no live explorer with a figure"
        for title, alts, described in explorers:
            assert title.strip(), f"{page}: a live explorer without a title"
            assert described.strip(), f"{page}: the live explorer {title!r} stores no description of its figure"
            for alt in alts:
                assert alt and not _PATH_LIKE.search(alt.strip()), f"{page}: {title!r}'s figure has alt {alt!r}"
                assert alt == described.strip(), f"{page}: {title!r}'s figure alt is not its description: {alt!r}"
                assert alt.startswith(title.strip() + ": ") and ", for " in alt and " against " in alt, \
                    f"{page}: {title!r}'s figure alt does not name the explorer, its values and its axes: {alt!r}"
        # the description is for assistive technology only: nothing of it shows, and it takes no room
        sizes = tab.locator(".pp-figure-alt-box").evaluate_all(
            "els => els.map(e => [e.getBoundingClientRect().height, e.querySelector('.pp-figure-alt')"
            ".getBoundingClientRect().width, e.querySelector('.pp-figure-alt').getBoundingClientRect().height])")
        assert sizes and all(box <= 0.5 and w <= 1 and h <= 1 for box, w, h in sizes), \
            f"{page}: the hidden figure description shows or takes room: {sizes}"


@on_pages(EXPLORER_PAGES)
def test_live_explorer_state_renders_with_full_sliders_and_a_figure_inside_its_frame(page, visit):
    tab = visit(page, shared=True).tab
    box = tab.locator(".jupyter-widgets.widget-vbox").first
    assert box.is_visible(), f"{page}: the explorer's stored state is not drawn"
    sliders = box.locator(".widget-slider")
    assert sliders.count() >= 2, f"{page}: the explorer shows {sliders.count()} sliders"
    tracks = box.locator(".widget-slider .slider-container").evaluate_all(
        "els => els.map(e => e.getBoundingClientRect().width)")
    assert min(tracks) >= 100, f"{page}: slider tracks collapsed to {min(tracks):.0f} px ({tracks})"
    labels = box.locator(".widget-label").evaluate_all("els => els.filter(e => e.textContent.trim())"
                                                       ".map(e => [e.scrollWidth, e.clientWidth, e.textContent])")
    clipped = [text for scroll, client, text in labels if scroll > client + 1]
    assert not clipped, f"{page}: control labels cut off: {clipped}"
    frame = box.bounding_box()
    image = box.locator(".widget-output img").first
    assert image.evaluate("e => e.complete && e.naturalWidth > 0"), f"{page}: the explorer's figure is not drawn"
    shown = image.bounding_box()
    assert shown["x"] >= frame["x"] - 1 and shown["x"] + shown["width"] <= frame["x"] + frame["width"] + 1, \
        f"{page}: the explorer's figure does not fit its frame ({shown} in {frame})"


@on_pages(ALL_PAGES)
def test_axe_finds_no_critical_or_serious_violation(page, visit, axe_source):
    tab = visit(page, shared=True).tab
    tab.add_script_tag(content=axe_source)
    result = tab.evaluate("() => axe.run(document, {resultTypes: ['violations']})")
    serious, moderate = [], []
    for violation in result["violations"]:
        line = (f"{violation['id']} ({violation['impact']}, {len(violation['nodes'])} elements): "
                f"{violation['help']}; first: {violation['nodes'][0]['target']}")
        if violation["id"] in AXE_ALLOWED:
            continue
        (serious if violation["impact"] in ("critical", "serious") else moderate).append(line)
    if moderate:
        print(f"{page}: moderate or minor axe findings:\n  " + "\n  ".join(moderate))
    assert not serious, f"{page}: axe-core violations:\n  " + "\n  ".join(serious)


@on_pages(EXPLORER_PAGES)
def test_precomputed_explorer_answers_its_sliders_offline(page, visit):
    v = visit(page, shared=True)          # moves the sliders and puts them back
    tab = v.tab
    explorer = tab.locator(".ppx")
    assert explorer.count() == 1, f"{page}: {explorer.count()} precomputed explorers"
    assert "precomputed" in explorer.locator(".ppx-badge").inner_text()
    note = explorer.locator(".ppx-note").inner_text()
    assert "Binder" in note and "Live Code" in note, f"{page}: the note does not say how to rerun live"
    frame = explorer.locator("img.ppx-frame")
    default = frame.get_attribute("src")
    sliders = explorer.locator("input[type=range]")
    assert sliders.count() >= 1
    for k in range(sliders.count()):
        slider = sliders.nth(k)
        assert slider.bounding_box()["width"] >= 100, f"{page}: slider {k} is {slider.bounding_box()['width']} px"
        start, top = slider.input_value(), int(slider.get_attribute("max"))
        seen = set()
        for position in range(top + 1):
            slider.fill(str(position))
            seen.add(frame.get_attribute("src"))
            texts = json.loads(slider.get_attribute("data-values"))
            value = explorer.locator("output.ppx-value").nth(k)
            assert value.inner_text() == texts[position]
            # the value stays on one line (a long one, such as a behaviour's name, must not wrap in its box)
            one_line = value.evaluate("e => e.getBoundingClientRect().height < 1.9 * parseFloat(getComputedStyle(e).fontSize)")
            assert one_line, f"{page}: slider {k}'s value {texts[position]!r} wraps"
        assert len(seen) == top + 1, f"{page}: slider {k} shows {len(seen)} figures for {top + 1} positions"
        slider.fill(start)
        assert frame.get_attribute("src") == default
    assert frame.evaluate("e => e.complete && e.naturalWidth > 0")
    assert not v.problems(), f"{page}: " + "; ".join(v.problems()[:8])


@on_pages(CHAPTERS)
def test_chapter_has_figures_blocks_exercises_and_launch_buttons(page, visit, screenshot_dir):
    tab = visit(page, shared=True).tab      # it clicks: after the checks that only read the page

    # figures: present, decoded, sharp on a high-density screen, inside the text column
    images = tab.locator(".cell_output img")
    assert images.count() >= 1, f"{page}: no figure"
    sizes = images.evaluate_all("els => els.map(e => [e.complete, e.naturalWidth, e.naturalHeight, "
                                "e.getBoundingClientRect().width, e.getBoundingClientRect().right])")
    assert all(ok and w > 0 and h > 0 for ok, w, h, _, _ in sizes), f"{page}: a figure failed to load: {sizes}"
    column = tab.evaluate("document.querySelector('main article').getBoundingClientRect().right")
    for ok, w, h, shown, right in sizes:
        assert w >= 1.9 * shown, f"{page}: a figure of {w} px is shown {shown:.0f} px wide (blurred on a 2x screen)"
        assert right <= column + 1, f"{page}: a figure overflows the text column ({right:.0f} > {column:.0f} px)"

    # lemma/theorem blocks and proofs (sphinx-proof)
    assert tab.locator("div.proof, div.lemma, div.theorem, div.corollary").count() >= 1, f"{page}: no prf blocks"

    # every collapsible proof is folded until its title is clicked
    proofs = tab.locator("div.proof.dropdown")
    for k in range(proofs.count()):
        proof = proofs.nth(k)
        assert not proof.locator("p").last.is_visible(), f"{page}: proof {k + 1} visible before click"
    if proofs.count():
        proofs.last.locator(".admonition-title").click()
        proofs.last.locator("p").last.wait_for(state="visible", timeout=5000)

    # exercises, with solutions collapsed until clicked (sphinx-exercise + togglebutton)
    assert tab.locator("div.exercise").count() >= 3, f"{page}: fewer than three exercises"
    solution = tab.locator("div.solution").first
    assert solution.count() == 1, f"{page}: no solution"
    toggle = solution.locator("button.toggle-button").first
    assert toggle.count() == 1, f"{page}: solution is not a collapsible dropdown"
    assert not solution.locator("section, .section, p").last.is_visible(), f"{page}: solution visible before click"
    toggle.click()
    solution.locator("section, .section, p").last.wait_for(state="visible", timeout=5000)

    # launch buttons (Binder and Live Code) on chapter pages
    launch = tab.locator(".dropdown-launch-buttons")
    assert launch.count() == 1, f"{page}: no launch-buttons menu"
    hrefs = launch.locator("a").evaluate_all("els => els.map(e => e.href)")
    assert any("mybinder" in h or "/v2/gh/" in h for h in hrefs), f"{page}: no Binder link in {hrefs}"
    assert tab.locator(".thebe-launch-button").count() >= 1 or \
        launch.locator("button, a").filter(has_text="Live Code").count() >= 1, f"{page}: no Live Code button"

    tab.screenshot(path=str(screenshot_dir / f"{page.replace('/', '_')}_full.png"), full_page=True)


@on_pages(EXPLORER_PAGES)
def test_a_visible_note_says_that_the_live_explorer_needs_a_kernel(page, visit):
    tab = visit(page, shared=True).tab      # the page's last test here: it marks the kernel ready
    note = tab.locator(".pp-live-note")
    assert note.count() == 1, f"{page}: {note.count()} notes beside the live explorer"
    assert note.is_visible(), f"{page}: the note is hidden"
    text = note.inner_text()
    for word in ("kernel", "Binder", "Live Code", "precomputed"):
        assert word in text, f"{page}: the note does not mention {word!r}: {text!r}"
    explorer = tab.locator(".jupyter-widgets.widget-vbox").first.bounding_box()
    assert note.bounding_box()["y"] < explorer["y"], f"{page}: the note is not above the live explorer"
    # hidden once a kernel runs (the class that book/_static/perfpriv.js sets when Thebe is ready)
    tab.evaluate("() => document.body.classList.add('pp-kernel-ready')")
    assert not note.is_visible(), f"{page}: the note stays with a kernel attached"



def test_every_page_of_the_share_left_a_screenshot(request, screenshot_dir):
    """Runs after the page checks of its module: each of its pages left a screenshot, each chapter a full one."""
    share = request.module.PAGE_SHARE
    pages = [p for i, p in enumerate(ALL_PAGES) if i % share[1] == share[0]]
    if not any(screenshot_dir.glob("*.png")):
        pytest.skip("the browser tests did not run")
    missing = [p for p in pages if not (screenshot_dir / f"{p.replace('/', '_')}.png").exists()]
    missing += [f"{p} (full page)" for p in pages if p in CHAPTERS
                and not (screenshot_dir / f"{p.replace('/', '_')}_full.png").exists()]
    print(f"screenshots in {screenshot_dir}")
    assert not missing, f"pages without a screenshot: {missing}"
