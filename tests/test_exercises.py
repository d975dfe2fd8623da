"""perfpriv.exercises: every stored answer equals what the library computes."""

import pytest

from perfpriv import exercises


@pytest.mark.parametrize("exercise_id", exercises.exercise_ids())
def test_stored_answer_equals_the_library(exercise_id):
    exercise = exercises.EXERCISES[exercise_id]
    computed = exercise.compute()
    assert computed == pytest.approx(exercise.answer, rel=exercise.rtol / 10, abs=exercise.atol / 10 + 1e-12)
    assert exercises.check(exercise_id, computed, quiet=True)


@pytest.mark.parametrize("exercise_id", exercises.exercise_ids())
def test_a_wrong_answer_is_rejected(exercise_id):
    exercise = exercises.EXERCISES[exercise_id]
    wrong = exercise.answer * 1.1 + 1.0
    assert not exercises.check(exercise_id, wrong, quiet=True)


def test_check_prints_a_verdict_without_the_answer(capsys):
    exercise = exercises.EXERCISES["ch04-ex-by-hand.leak"]
    exercises.check(exercise.id, 0.5)
    out = capsys.readouterr().out
    assert out.startswith("ch04-ex-by-hand.leak: not yet")
    assert f"{exercise.answer:.3f}"[:4] not in out.split(":", 1)[1]


def test_every_chapter_has_registered_exercises():
    for chapter in ("ch01", "ch02", "ch03", "ch04", "ch05", "ch06"):
        assert exercises.exercise_ids(chapter), chapter


def test_unknown_id_and_bad_answer_raise_value_error():
    with pytest.raises(ValueError, match="exercise_id must be one of"):
        exercises.check("ch99-nope", 1.0)
    with pytest.raises(ValueError, match="answer"):
        exercises.check("ch01-ex-critical.beta_c", float("nan"))


@pytest.mark.parametrize("call, name", [
    (lambda: exercises.check(["ch01-ex-critical.beta_c"], 0.2), "exercise_id"),
    (lambda: exercises.describe(3), "exercise_id"),
    (lambda: exercises.exercise_ids(chapter=3), "chapter"),
])
def test_ids_and_chapters_of_the_wrong_type_raise_one_line_naming_the_parameter(call, name):
    with pytest.raises(TypeError, match=name):
        call()


# ---------------------------------------------------------------------------------------- bad input


def test_exercise_checks_refuse_non_string_ids_and_chapters():
    with pytest.raises(TypeError, match="exercise_id must be a string"):
        exercises.check(["ch04-ex-by-hand.leak"], 0.2)
    with pytest.raises(TypeError, match="chapter must be a string"):
        exercises.exercise_ids(chapter=3)


def test_an_exercise_checks_its_fields():
    # exercises.Exercise(answer=nan, ...): kept as given
    from perfpriv.exercises import Exercise

    for kwargs, word in [(dict(answer=float("nan")), "answer"), (dict(rtol=-1.0), "rtol"), (dict(id=1), "id"),
                         (dict(compute=1.0), "compute")]:
        with pytest.raises((TypeError, ValueError), match=word):
            Exercise(**dict(dict(id="x", prompt="p", answer=1.0, compute=lambda: 1.0), **kwargs))
