"""core.registry: the ordered, de-duplicated registries behind recording's and history's hooks."""

from __future__ import annotations

from collections.abc import Callable

from code_trajectory.core.registry import Registry


def test_register_keeps_order_and_one_of_each_and_works_as_a_decorator() -> None:
    handlers: Registry[Callable[[], str]] = Registry()

    @handlers.register
    def first() -> str:
        return "first"

    def second() -> str:
        return "second"

    assert handlers.register(second) is second
    handlers.register(first)  # again: kept once, in its first place
    assert [h() for h in handlers] == ["first", "second"]


def test_a_handler_may_register_another_while_they_are_called() -> None:
    handlers: Registry[Callable[[], None]] = Registry()
    called: list[str] = []

    def late() -> None:
        called.append("late")

    def early() -> None:
        called.append("early")
        handlers.register(late)

    handlers.register(early)
    for handler in handlers:
        handler()
    assert called == ["early"]  # the running pass is not changed
    assert list(handlers) == [early, late]
