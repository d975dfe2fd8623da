"""perfpriv.notebook.brief_errors: perfpriv's argument errors as one line in IPython."""

import sys

import pytest

from perfpriv import bernoulli, notebook


class FakeShell:
    """The two methods of IPython's InteractiveShell that brief_errors uses."""

    def __init__(self):
        self.handler = None
        self.full_tracebacks = []

    def set_custom_exc(self, types, handler):
        self.types, self.handler = types, handler

    def showtraceback(self, exc_tuple, tb_offset=None):
        self.full_tracebacks.append(exc_tuple[0])


def _raise(fn):
    try:
        fn()
    except (ValueError, TypeError, ZeroDivisionError):
        return sys.exc_info()
    raise AssertionError("no exception")


def test_perfpriv_value_error_is_one_line(capsys):
    shell = FakeShell()
    notebook.brief_errors(shell)
    assert set(shell.types) == {ValueError, TypeError}
    etype, value, tb = _raise(lambda: bernoulli.growth_factor(0.1, q=1.5, r=0.2))
    shell.handler(shell, etype, value, tb)
    err = capsys.readouterr().err
    assert err == "ValueError: q must be in [0, 1]; got 1.5\n"
    assert shell.full_tracebacks == []


def test_errors_from_elsewhere_keep_their_traceback(capsys):
    shell = FakeShell()
    notebook.brief_errors(shell)
    etype, value, tb = _raise(lambda: int("x"))
    shell.handler(shell, etype, value, tb)
    assert shell.full_tracebacks == [ValueError]
    assert capsys.readouterr().err == ""


def test_outside_ipython_nothing_happens():
    pytest.importorskip("IPython")
    assert notebook.brief_errors() is None


def test_a_shell_that_is_not_ipython_is_refused_naming_the_parameter():
    import pytest

    with pytest.raises(TypeError, match="shell must be an IPython"):
        notebook.brief_errors(shell="x")
