"""Answers a replay of a real C# history found wrong (jbogard/MediatR, 59 merges of 2019-2023; the CLI as a
subprocess on real git in temp dirs), each reduced to the edit that showed it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from support import cli_stdout, subprocess_env, write


def recorded(project: Path, rel: str, *versions: str) -> str:
    """Write each of ``versions`` to ``rel`` with a checkpoint after each (the CLI); the log's last line."""
    for text in versions:
        write(project, rel, text)
        cli_stdout(project, "checkpoint")
    return cli_stdout(project, "log").splitlines()[-1]


_WRAPPERS_CS = """namespace MediatR.Wrappers;

public abstract class RequestHandlerWrapper<TResponse> : RequestHandlerBase
{
    public abstract Task<TResponse> Handle(IRequest<TResponse> request, IServiceProvider serviceProvider);
}
%s
public class RequestHandlerWrapperImpl<TRequest, TResponse> : RequestHandlerWrapper<TResponse>
    where TRequest : IRequest<TResponse>
{
    public override Task<TResponse> Handle(IRequest<TResponse> request, IServiceProvider serviceProvider)
    {
        return serviceProvider.GetRequiredService<IRequestHandler<TRequest, TResponse>>().Handle((TRequest)request);
    }
}
%s"""

_NON_GENERIC_CS = """
public abstract class RequestHandlerWrapper : RequestHandlerBase
{
    public abstract Task Handle(IRequest request, IServiceProvider serviceProvider);
}
"""

_IMPL_CS = """
public class RequestHandlerWrapperImpl<TRequest> : RequestHandlerWrapper
    where TRequest : IRequest
{
    public override Task Handle(IRequest request, IServiceProvider serviceProvider)
    {
        return serviceProvider.GetRequiredService<IRequestHandler<TRequest>>().Handle((TRequest)request);
    }
}
"""


def test_a_csharp_type_added_beside_a_generic_one_of_its_name_is_a_type_of_its_own(project: Path) -> None:
    # MediatR #835 added `RequestHandlerWrapper` beside `RequestHandlerWrapper<TResponse>` and
    # `RequestHandlerWrapperImpl<TRequest>` after `RequestHandlerWrapperImpl<TRequest, TResponse>`: both pairs had one
    # name (`RequestHandlerWrapperImpl`, `RequestHandlerWrapperImpl@2`), so the new `RequestHandlerWrapper` took the
    # generic one's history and `RequestHandlerWrapperImpl@2` the older impl's (since 2019: "modified" where it was
    # added); C# tells them apart by arity, and so do their names now: `RequestHandlerWrapperImpl<,>`
    last = recorded(project, "src/Wrappers.cs", _WRAPPERS_CS % ("", ""), _WRAPPERS_CS % (_NON_GENERIC_CS, _IMPL_CS))
    assert last == ("M src/Wrappers.cs (+14): added RequestHandlerWrapper (Handle), RequestHandlerWrapperImpl<> "
                    "(Handle)"), last  # its abstract Handle is a method too
    plain = cli_stdout(project, "symbol", "src/Wrappers.cs", "RequestHandlerWrapper")
    assert plain.count("\n## ") == 1 and "· added" in plain and "first recorded" not in plain, plain
    impl = cli_stdout(project, "symbol", "src/Wrappers.cs", "RequestHandlerWrapperImpl<TRequest>")
    assert "# Trajectory of `RequestHandlerWrapperImpl<>`" in impl and impl.count("\n## ") == 1, impl
    assert "· added" in impl and "first recorded" not in impl, impl
    generic = cli_stdout(project, "symbol", "src/Wrappers.cs", "RequestHandlerWrapperImpl<TRequest, TResponse>.Handle")
    assert "# Trajectory of `RequestHandlerWrapperImpl<,>.Handle`" in generic, generic
    assert "as first recorded" in generic and "added" not in generic, generic
    both = subprocess.run([sys.executable, "-m", "code_trajectory", "symbol", "src/Wrappers.cs",
                           "RequestHandlerWrapperImpl"], cwd=project, env=subprocess_env(), capture_output=True,
                          text=True, timeout=120)
    assert both.returncode == 2 and "ambiguous: it matches RequestHandlerWrapperImpl<,>, RequestHandlerWrapperImpl<>" \
        in both.stderr, both.stderr


_HANDLE_CS = """namespace MediatR.Wrappers;

public class RequestHandlerWrapperImpl<TRequest, TResponse> : RequestHandlerWrapper<TResponse>
    where TRequest : IRequest<TResponse>
{
    public override async Task<object?> Handle(object request, %(old)s,
        CancellationToken cancellationToken) =>
        await Handle((IRequest<TResponse>)request, %(arg)s, cancellationToken).ConfigureAwait(false);

    public override Task<TResponse> Handle(IRequest<TResponse> request, %(old)s,
        CancellationToken cancellationToken)
    {
        Task<TResponse> Handler() => %(arg)s.GetInstance<IRequestHandler<TRequest, TResponse>>()
            .Handle((TRequest) request, cancellationToken);

        return Handler();
    }
}
"""


def test_csharp_overloads_whose_parameter_types_all_changed_at_once_are_modified(project: Path) -> None:
    # MediatR #802 changed `ServiceFactory serviceFactory` to `IServiceProvider serviceProvider` in both `Handle`
    # overloads (and #772 swapped their last two parameters): each overload's name changed, and with two of them no
    # old one was paired with a new one, so the log said both removed and both added, and each `Handle`'s history
    # began there ("added"), its older versions lost
    last = recorded(project, "src/Wrappers.cs",
                    _HANDLE_CS % {"old": "ServiceFactory serviceFactory", "arg": "serviceFactory"},
                    _HANDLE_CS % {"old": "IServiceProvider serviceProvider", "arg": "serviceProvider"})
    assert "removed" not in last and "added" not in last, last
    assert "modified RequestHandlerWrapperImpl<,>.Handle(object,IServiceProvider,CancellationToken), " \
           "RequestHandlerWrapperImpl<,>.Handle(IRequest<TResponse>,IServiceProvider,CancellationToken)" in last, last
    for params, old in (("object", "Handle(object,ServiceFactory,CancellationToken)"),
                        ("IRequest<TResponse>", "Handle(IRequest<TResponse>,ServiceFactory,CancellationToken)")):
        symbol = cli_stdout(project, "symbol", "src/Wrappers.cs",
                            f"RequestHandlerWrapperImpl<,>.Handle({params},IServiceProvider,CancellationToken)")
        assert "as first recorded" in symbol and "added" not in symbol, symbol
        assert f"modified (named RequestHandlerWrapperImpl<,>.{old} before)" in symbol, symbol


_UNIT_CS = """namespace MediatR;

public delegate Task<TResponse> RequestHandlerDelegate<TResponse>(%s);

public readonly struct Unit : IEquatable<Unit>
{
    private static readonly Unit _value = new();

    public static ref readonly Unit Value => ref _value;

    public bool Equals(Unit other) => true;

    public static bool operator ==(Unit first, Unit second) => %s;

    public static bool operator !=(Unit first, Unit second) => false;
}
"""


def test_csharp_delegates_operators_and_expression_bodied_properties_are_symbols(project: Path) -> None:
    # MediatR's RequestHandlerDelegate<TResponse> (its pipeline's delegate), Unit's `operator ==` and its
    # `Value => ref _value` were no symbols: a change to the delegate was "code outside symbols", one to an
    # operator "modified Unit", and `symbol Unit.cs Unit.operator==` or `Unit.Value` was "no symbol"
    last = recorded(project, "src/Unit.cs", _UNIT_CS % ("", "true"),
                    _UNIT_CS % ("CancellationToken t = default", "first.Equals(second)"))
    assert last == "M src/Unit.cs (+2 -2): modified RequestHandlerDelegate<>, Unit.operator==", last
    delegate = cli_stdout(project, "symbol", "src/Unit.cs", "RequestHandlerDelegate")
    assert "# Trajectory of `RequestHandlerDelegate<>`" in delegate and "· modified" in delegate, delegate
    assert "+public delegate Task<TResponse> RequestHandlerDelegate<TResponse>(CancellationToken t = default);" \
        in delegate, delegate
    operator = cli_stdout(project, "symbol", "src/Unit.cs", "Unit.operator==")
    assert "+    public static bool operator ==(Unit first, Unit second) => first.Equals(second);" in operator, operator
    assert "as first recorded" in cli_stdout(project, "symbol", "src/Unit.cs", "Unit.Value")


_MOVED_CS = """namespace MediatR.%s
{
    %s class RequestHandlerBase
    {
        public object GetHandler(ServiceFactory factory)
        {
            return factory(typeof(object));
        }
    }
}
"""


def test_a_csharp_symbol_asked_in_a_file_moved_with_its_namespace_says_where_it_went(project: Path) -> None:
    # MediatR #580 moved Internal/RequestHandlerWrapper.cs to Wrappers/ and its namespace MediatR.Internal to
    # MediatR.Wrappers: `symbol Internal/RequestHandlerWrapper.cs RequestHandlerBase` ended in "removed" (the file
    # was renamed, but its symbols were looked for there under their old names)
    write(project, "src/Internal/RequestHandlerWrapper.cs", _MOVED_CS % ("Internal", "internal"))
    cli_stdout(project, "checkpoint")
    (project / "src/Internal/RequestHandlerWrapper.cs").unlink()
    write(project, "src/Wrappers/RequestHandlerWrapper.cs", _MOVED_CS % ("Wrappers", "public"))
    cli_stdout(project, "checkpoint")
    assert cli_stdout(project, "log").splitlines()[-1].startswith(
        "R src/Internal/RequestHandlerWrapper.cs → src/Wrappers/RequestHandlerWrapper.cs (+2 -2)")
    base = cli_stdout(project, "symbol", "src/Internal/RequestHandlerWrapper.cs", "RequestHandlerBase")
    assert "· moved to src/Wrappers/RequestHandlerWrapper.cs (MediatR.Wrappers.RequestHandlerBase)" in base, base
    assert "removed" not in base, base
    method = cli_stdout(project, "symbol", "src/Internal/RequestHandlerWrapper.cs", "RequestHandlerBase.GetHandler")
    assert "· moved to src/Wrappers/RequestHandlerWrapper.cs (MediatR.Wrappers.RequestHandlerBase.GetHandler) " \
           "(body unchanged)" in method, method
