"""Where a client reaches the table service: one address, or a comma-separated list of its
instances (POKER_TABLE_ADDR, ``--table-addr``), read by :func:`parse_addresses`, the one place a
client's list is read, and a channel balanced call by call over them (:func:`table_channel`)."""

from __future__ import annotations

import argparse
import ipaddress
import re

import grpc

from shared.infra.tls import TlsConfig, channel


class AddressError(ValueError):
    """An address list that does not parse; the message says what is wrong and what to give."""


#: gRPC target schemes a single address may carry (``dns:///table:50051``: a name that
#: resolves to several instances, balanced as a list is)
_SCHEMES = ("dns:", "ipv4:", "ipv6:", "unix:", "unix-abstract:", "vsock:")
_HOST = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\]")


def parse_addresses(text: str, what: str = "table service") -> list[str]:
    """The addresses of ``text``: ``host:port``, or a comma-separated list of them (spaces
    around an entry are dropped), as shared/infra/tls.channel balances them (round robin).

    A list is handed to gRPC as one ``ipv4:`` target, so each of its entries must be an IPv4
    address and port (``127.0.0.1:50051,127.0.0.1:50071``); a single entry may also be a host
    name (``table:50051``), ``[::1]:50051`` or a gRPC target (``dns:///table:50051``). The TLS
    check does not depend on the address: the server must prove the service's identity
    whichever instance answers. :class:`AddressError` for an empty list or entry, a
    duplicate, a port that is not 1..65535, or a host that cannot be in a list."""
    if not text or not text.strip():
        raise AddressError(f"no {what} address: give host:port, or a comma-separated list "
                           "of them (127.0.0.1:50051,127.0.0.1:50071)")
    entries = [entry.strip() for entry in text.split(",")]
    if any(not entry for entry in entries):
        raise AddressError(f"{what} address list {text!r} has an empty entry: give "
                           "host:port[,host:port...] with no empty item")
    if len(entries) == 1 and entries[0].lower().startswith(_SCHEMES):
        return entries
    out: list[str] = []
    for entry in entries:
        if entry.lower().startswith(_SCHEMES):
            raise AddressError(f"{what} address {entry!r} in a list: a gRPC target "
                               "(dns:///NAME:PORT, ...) must be the only address given")
        host, port = _host_port(entry, what)
        if len(entries) > 1:
            try:
                ipaddress.IPv4Address(host)
            except ValueError:
                raise AddressError(
                    f"{what} address {entry!r} in a list: every entry of a list must be an "
                    "IPv4 address and port (127.0.0.1:50051); for a name that resolves to "
                    "every instance give it alone (dns:///NAME:PORT)") from None
        address = f"{host}:{port}"
        if address in out:
            raise AddressError(f"{what} address {address} is twice in the list {text!r}")
        out.append(address)
    return out


def _host_port(entry: str, what: str) -> tuple[str, int]:
    host, colon, port = entry.rpartition(":")
    if not colon or not host:
        raise AddressError(f"{what} address {entry!r} is not host:port (127.0.0.1:50051)")
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise AddressError(f"{what} address {entry!r}: the port must be a number from 1 to "
                           "65535")
    if not _HOST.fullmatch(host) or (":" in host and not host.startswith("[")):
        raise AddressError(f"{what} address {entry!r}: {host!r} is not a host name or IP "
                           "address (an IPv6 address goes in brackets: [::1]:50051)")
    return host, int(port)


def address_list(text: str) -> str:
    """An argparse ``type`` for ``--table-addr`` (its default, POKER_TABLE_ADDR, is checked
    the same way): the list as :func:`parse_addresses` reads it, comma-joined."""
    try:
        return ",".join(parse_addresses(text))
    except AddressError as exc:
        raise argparse.ArgumentTypeError(f"{exc} (--table-addr, or POKER_TABLE_ADDR)") from None


def table_channel(addresses: str, tls: TlsConfig | None,
                  options=()) -> grpc.aio.Channel:
    """A channel to the table service over every instance of ``addresses`` (round robin;
    the server must present the ``table`` certificate, whatever its address)."""
    return channel(",".join(parse_addresses(addresses)), tls, service="table",
                   options=options)
