"""The one address guard for every connection SF opens or lets a sandbox open.

``checked_addresses(host, port)`` resolves a host once and refuses it when any of its
addresses is not a public unicast address: loopback, private (RFC 1918, ULA),
link-local (and the cloud metadata service, 169.254.169.254 and fd00:ec2::254),
carrier-grade NAT (100.64.0.0/10), multicast, unspecified, reserved, and the IPv6
forms that carry an IPv4 address a router or the kernel would reach: IPv4-mapped
(``::ffff:127.0.0.1``), IPv4-compatible (``::127.0.0.1``), NAT64 (``64:ff9b::/96``,
``64:ff9b:1::/48``), 6to4 (``2002::/16``) and Teredo (``2001::/32``). Decimal, octal
and short IPv4 forms (``2130706433``, ``0177.0.0.1``, ``127.1``) need no rule of their
own: the resolver turns them into the address that is checked.

The caller then connects to an address it was given here, never to the name again:
a second lookup could answer differently (DNS rebinding). ``guarded_client`` is an
httpx client built that way (httpcore's network backend resolves through the guard).

Only a server setting can let a host through: ``SF_NET_ALLOW_HOSTS`` (names or
literal addresses an operator trusts to be internal: a self-hosted GitLab, a test
receiver). A project's policy never can. ``SF_NET_TEST_HOSTS`` (settings only, for
tests) maps a name to an address without DNS, so that tests reach a loopback
listener under a made-up domain and nothing leaves the machine.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable
from typing import Any

import httpcore
import httpx
from django.conf import settings

from sf_core.errors import SfError

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

METADATA = {ipaddress.ip_address("169.254.169.254"), ipaddress.ip_address("fd00:ec2::254")}
CGNAT = ipaddress.ip_network("100.64.0.0/10")
NAT64 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))
SIX_TO_FOUR = ipaddress.ip_network("2002::/16")
IPV4_COMPATIBLE = ipaddress.ip_network("::/96")


class AddressRefused(SfError):
    """A host that resolves to an address SF does not connect to (the message says
    which and why), or that does not resolve."""


def address_problem(ip: IPAddress) -> str:
    """Why SF does not connect to ``ip`` ('' when it may): the kind of address."""
    if ip in METADATA:
        return "the cloud metadata address"
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = _embedded_ipv4(ip)
        if embedded is not None:
            kind, v4 = embedded
            inner = address_problem(v4) or "a public IPv4 address"
            return f"the {kind} IPv6 form of {v4} ({inner})"
    if ip.is_unspecified:
        return "the unspecified address"
    if ip.is_loopback:
        return "a loopback address"
    if ip.is_link_local:
        return "a link-local address"
    if ip.is_multicast:
        return "a multicast address"
    if isinstance(ip, ipaddress.IPv4Address) and ip in CGNAT:
        return "a carrier-grade NAT address (100.64.0.0/10)"
    if ip.is_private:
        return "a private address"
    if not ip.is_global or ip.is_reserved:
        return "a reserved, non-public address"
    return ""


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> tuple[str, ipaddress.IPv4Address] | None:
    """The IPv4 address an IPv6 form carries (mapped, compatible, NAT64, 6to4, Teredo).

    NAT64 and IPv4-mapped/compatible forms are refused whatever they carry (a gateway
    on the host's network translates them); 6to4 and Teredo are refused too: both are
    deprecated relay mechanisms, and the address that would be reached is the embedded
    one (reported in the reason)."""
    if ip.ipv4_mapped is not None:
        return "IPv4-mapped", ip.ipv4_mapped
    if any(ip in net for net in NAT64):
        return "NAT64", ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if ip.sixtofour is not None:
        return "6to4", ip.sixtofour
    if ip.teredo is not None:
        return "Teredo", ip.teredo[1]
    if ip in IPV4_COMPATIBLE and int(ip) > 1:
        return "IPv4-compatible", ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def host_normal(host: str) -> str:
    """A host as it is compared: lower case, no brackets, no trailing dot."""
    return host.strip().strip("[]").rstrip(".").lower()


def host_allowed_by_server(host: str) -> bool:
    """Whether the server's ``SF_NET_ALLOW_HOSTS`` lets ``host`` reach any address."""
    allowed = {host_normal(h) for h in getattr(settings, "SF_NET_ALLOW_HOSTS", ())}
    return host_normal(host) in allowed


def resolve(host: str, port: int) -> list[IPAddress]:
    """Every address ``host`` resolves to (once), in the resolver's order."""
    name = host_normal(host)
    if not name:
        raise AddressRefused("no host given")
    mapped = getattr(settings, "SF_NET_TEST_HOSTS", {}).get(name)
    if mapped:
        return [ipaddress.ip_address(mapped)]
    try:
        infos = socket.getaddrinfo(name, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise AddressRefused(f"{host} does not resolve ({exc})") from None
    found: list[IPAddress] = []
    for info in infos:
        ip = ipaddress.ip_address(str(info[4][0]).split("%")[0])
        if ip not in found:
            found.append(ip)
    if not found:
        raise AddressRefused(f"{host} does not resolve")
    return found


def checked_addresses(host: str, port: int) -> list[IPAddress]:
    """The addresses of ``host`` SF may connect to, or ``AddressRefused`` naming the
    first one it may not (one bad address refuses the host: a name that answers with
    a public and a loopback address is a rebinding attempt)."""
    found = resolve(host, port)
    if host_allowed_by_server(host):
        return found
    for ip in found:
        problem = address_problem(ip)
        if problem:
            raise AddressRefused(f"{host} is {problem} ({ip}); SF does not connect there")
    return found


def literal_problem(host: str) -> str:
    """Why a host written as a literal address is refused ('' for a name or a public
    literal): for validating a policy without resolving anything."""
    try:
        ip = ipaddress.ip_address(host_normal(host))
    except ValueError:
        return ""
    if host_allowed_by_server(host):
        return ""
    return address_problem(ip)


class GuardedBackend(httpcore.SyncBackend):
    """httpcore's network backend, connecting only to addresses the guard checked."""

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        try:
            addresses = checked_addresses(host, port)
        except AddressRefused as exc:
            raise httpcore.ConnectError(str(exc)) from None
        error: Exception | None = None
        for ip in addresses:
            try:
                return super().connect_tcp(str(ip), port, timeout, local_address, socket_options)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                error = exc
        assert error is not None
        raise error

    def connect_unix_socket(self, *args: Any, **kwargs: Any) -> httpcore.NetworkStream:
        raise httpcore.ConnectError("SF's outbound client does not use Unix sockets")


def guarded_transport() -> httpx.HTTPTransport:
    """An httpx transport whose connections go only to checked addresses. TLS still
    verifies the certificate against the host name (httpcore starts TLS with the
    name, not the address)."""
    transport = httpx.HTTPTransport()
    transport._pool = httpcore.ConnectionPool(
        ssl_context=httpx.create_ssl_context(), network_backend=GuardedBackend()
    )
    return transport


def guarded_client(**options: Any) -> httpx.Client:
    """An httpx client for requests SF makes itself (forge, webhooks): the guard on
    every connection, no proxy from the environment, no redirects unless asked."""
    return httpx.Client(transport=guarded_transport(), trust_env=False, **options)
