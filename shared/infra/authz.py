"""The server side of identity: the rule per gRPC method that says which roles may call it,
the interceptor that verifies each call's token against it (:class:`Access`), and the
handler's view of its verified caller (:func:`caller`)."""

from __future__ import annotations

import contextvars
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import grpc
import structlog

from .guard import guarded
from .identity import ROLES, Principal, Unauthenticated, Verifier, token_from
from .tls import OPEN_METHODS

log = structlog.get_logger()


@dataclass(frozen=True)
class Rule:
    """Who may call a method: a token with any of ``roles``; empty: any valid token."""

    roles: frozenset[str] = field(default_factory=frozenset)

    def __post_init__(self) -> None:
        roles = frozenset([self.roles] if isinstance(self.roles, str) else self.roles)
        unknown = roles - set(ROLES)
        if unknown:
            raise ValueError(f"unknown roles {sorted(unknown)}: the roles are "
                             f"{', '.join(ROLES)}")
        object.__setattr__(self, "roles", roles)


_CALLER: contextvars.ContextVar[Principal | None] = contextvars.ContextVar(
    "poker_caller", default=None)


def caller() -> Principal:
    """The verified caller of the gRPC call being handled (set by :class:`Access` before
    the handler runs). Outside such a call: :class:`Unauthenticated` (fail closed)."""
    principal = _CALLER.get()
    if principal is None:
        raise Unauthenticated("no verified caller for this call (the server has no access "
                              "rules for it)")
    return principal


def _roles_text(roles: Iterable[str]) -> str:
    return " or ".join(sorted(roles))


class Access(grpc.aio.ServerInterceptor):
    """Each call's token verified and its role checked against ``rules`` (method name, e.g.
    ``SitDown``, or the full ``/pkg.Service/Method`` -> :class:`Rule`), before the
    handler runs; the handler then reads the caller with :func:`caller`.

    Health and reflection (:data:`shared.infra.tls.OPEN_METHODS`) are open. A method
    without a rule is refused (PERMISSION_DENIED: fail closed), whatever the token; a
    missing or bad token is UNAUTHENTICATED; a valid token without a role the rule names is
    PERMISSION_DENIED, naming the roles that may call. Refusals are logged at info with
    their reason (never the token)."""

    def __init__(self, rules: Mapping[str, Rule], verifier: Verifier, service: str) -> None:
        self._guarded = guarded
        for name, rule in rules.items():
            if not isinstance(rule, Rule):
                raise TypeError(f"the rule for {name} is not a Rule: {rule!r}")
        self.rules, self.verifier, self.service = dict(rules), verifier, service

    def rule_for(self, method: str) -> Rule | None:
        rule = self.rules.get(method)
        return rule if rule is not None else self.rules.get(method.rsplit("/", 1)[-1])

    async def intercept_service(self, continuation, details):
        handler = await continuation(details)
        method = details.method
        if handler is None or method.startswith(OPEN_METHODS):
            return handler
        rule = self.rule_for(method)

        async def refuse(context, code: grpc.StatusCode, reason: str, **extra) -> None:
            log.info("call refused", service=self.service, method=method, code=code.name,
                     reason=reason, **extra)
            await context.abort(code, reason)
            raise RuntimeError("context.abort returned")  # never reached: fail closed

        async def allowed(_request, context) -> None:
            if rule is None:
                await refuse(context, grpc.StatusCode.PERMISSION_DENIED,
                             f"no access rule for {method}: refused")
            try:
                principal = await self.verifier.averify(
                    token_from(context.invocation_metadata()))
            except Unauthenticated as exc:
                await refuse(context, grpc.StatusCode.UNAUTHENTICATED, str(exc))
            if rule.roles and not principal.has(*rule.roles):
                held = _roles_text(principal.roles) or "no role"
                await refuse(context, grpc.StatusCode.PERMISSION_DENIED,
                             f"{method} of the {self.service} service may be called with "
                             f"the {_roles_text(rule.roles)} role only; the token of "
                             f"{principal.subject!r} has {held}", subject=principal.subject)
            _CALLER.set(principal)  # this call's task: seen by the handler, no other call

        return self._guarded(handler, allowed)
