"""The bibliography in the form of the text's citations: "Dwork and Roth, 2014", sorted by author and year.

The chapters cite author-year ({cite}`key` renders "[Dwork and Roth, 2014]",
``bibtex_reference_style: author_year``), but pybtex's ``plain`` style
labels the bibliography [1], [2], ... A reader who meets "[Dwork and Roth,
2014]" in the text then looks for it under a number. This pybtex style,
``authoryear``, labels every entry exactly as the text cites it (one author:
"Warner"; two: "Dwork and Roth"; more: "Dwork et al."; then the year, with a
letter when two entries would share a label; an entry without authors, such as
an excerpt whose copy names none, by its title, as the text cites it) and sorts
the list as the labels read: by first author, one author before two before "et al.", then by year. Titles keep the capitals of the ``.bib`` file (they are
protected there with an extra pair of braces).
"""

from __future__ import annotations

import string

import pybtex.plugin
from pybtex.style.formatting.unsrt import Style as UnsrtStyle
from pybtex.style.labels import BaseLabelStyle
from pybtex.style.sorting.author_year_title import SortingStyle


def _last_names(entry) -> list[str]:
    persons = entry.persons.get("author") or entry.persons.get("editor") or []
    names = []
    for person in persons:
        last = " ".join(person.prelast_names + person.last_names) or " ".join(person.first_names)
        names.append(_plain(last))
    return names


def _plain(text: str) -> str:
    """A name without BibTeX braces and accents commands (``Tram{\\`e}r`` -> ``Tramèr``)."""
    from pybtex.richtext import Text

    try:
        return Text.from_latex(text).render_as("text")
    except Exception:   # noqa: BLE001 - unusual markup: keep the name, without braces
        return text.replace("{", "").replace("}", "")


def author_year_label(entry) -> str:
    """"Warner, 1965", "Dwork and Roth, 2014", "Dwork et al., 2006" (as ``{cite}`` renders in the text)."""
    names = _last_names(entry)
    year = entry.fields.get("year", "n.d.")
    if not names:   # cited by its title (sphinxcontrib-bibtex's author_or_editor_or_title in the text)
        who = _plain(entry.fields.get("title", entry.key))
    elif len(names) == 1:
        who = names[0]
    elif len(names) == 2:
        who = f"{names[0]} and {names[1]}"
    else:
        who = f"{names[0]} et al."
    return f"{who}, {year}"


class AuthorYearLabelStyle(BaseLabelStyle):
    def format_labels(self, sorted_entries):
        labels = [author_year_label(entry) for entry in sorted_entries]
        counts = {label: labels.count(label) for label in labels}
        seen: dict[str, int] = {}
        for label in labels:
            if counts[label] > 1:
                k = seen.get(label, 0)
                seen[label] = k + 1
                yield label + string.ascii_lowercase[k]
            else:
                yield label


class AuthorYearSortingStyle(SortingStyle):
    """Sorted as the labels read: first author, then one author before two before "et al.", then year, title.

    Braces are ignored (pybtex's own key keeps a brace, which sorts after every letter).
    """

    def sorting_key(self, entry):
        names = [n.lower() for n in _last_names(entry)]
        # an entry without authors sorts under its title, which is its label
        first = names[0] if names else _plain(entry.fields.get("title", "")).lower()
        second = names[1] if len(names) == 2 else ""
        return (first, min(len(names), 3), second, entry.fields.get("year", ""),
                _plain(entry.fields.get("title", "")).lower())


class AuthorYearStyle(UnsrtStyle):
    default_label_style = AuthorYearLabelStyle
    default_sorting_style = AuthorYearSortingStyle


pybtex.plugin.register_plugin("pybtex.style.formatting", "authoryear", AuthorYearStyle)


def setup(app):
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1.0"}
