"""The address guard: every loopback, private and mapped form refused, public ones
allowed, the server's list the only exception, and the guarded client connecting to
the address it checked (a loopback listener under a test name)."""

from __future__ import annotations

import ipaddress
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest

from sf_core.netguard import (
    AddressRefused,
    address_problem,
    checked_addresses,
    guarded_client,
    literal_problem,
)

REFUSED = {
    "127.0.0.1": "loopback",
    "localhost": "loopback",
    "::1": "loopback",
    "[::1]": "loopback",
    "0.0.0.0": "unspecified",
    "10.1.2.3": "private",
    "172.16.0.1": "private",
    "192.168.1.1": "private",
    "100.64.0.1": "carrier-grade NAT",
    "169.254.169.254": "metadata",
    "169.254.1.1": "link-local",
    "fd00:ec2::254": "metadata",
    "fe80::1": "link-local",
    "fc00::1": "private",
    "224.0.0.1": "multicast",
    "::ffff:127.0.0.1": "IPv4-mapped",
    "::127.0.0.1": "IPv4-compatible",
    "64:ff9b::7f00:1": "NAT64",
    "64:ff9b:1::a00:1": "NAT64",
    "2002:7f00:1::": "6to4",
    "2002:a00:1::": "6to4",
    "2001:0:4136:e378:8000:63bf:3fff:fdd2": "Teredo",
    "2130706433": "loopback",  # decimal
    "0177.0.0.1": "loopback",  # octal
    "0x7f.1": "loopback",  # hex, short
    "127.1": "loopback",
}


@pytest.mark.parametrize(("host", "kind"), REFUSED.items())
def test_every_non_public_form_is_refused(host: str, kind: str) -> None:
    with pytest.raises(AddressRefused, match=kind):
        checked_addresses(host, 80)


@pytest.mark.parametrize("address", ["8.8.8.8", "2606:4700:4700::1111", "151.101.0.223"])
def test_public_addresses_pass(address: str) -> None:
    assert address_problem(ipaddress.ip_address(address)) == ""
    assert checked_addresses(address, 443) == [ipaddress.ip_address(address)]


def test_only_the_servers_list_lets_a_host_through(settings: Any) -> None:
    settings.SF_NET_ALLOW_HOSTS = ["internal.sf.test", "127.0.0.1"]
    settings.SF_NET_TEST_HOSTS = {"internal.sf.test": "10.0.0.5", "other.sf.test": "10.0.0.6"}
    assert checked_addresses("internal.sf.test", 443) == [ipaddress.ip_address("10.0.0.5")]
    assert checked_addresses("127.0.0.1", 80) == [ipaddress.ip_address("127.0.0.1")]
    with pytest.raises(AddressRefused, match="private"):
        checked_addresses("other.sf.test", 443)
    assert literal_problem("127.0.0.1") == ""
    assert "loopback" in literal_problem("[::1]")
    assert literal_problem("pypi.org") == ""  # names are judged when resolved


def test_a_name_that_does_not_resolve_is_refused_by_name() -> None:
    with pytest.raises(AddressRefused, match=r"nowhere\.invalid does not resolve"):
        checked_addresses("nowhere.invalid", 80)


class _Ok(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def port() -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Ok)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def test_the_guarded_client_connects_to_the_checked_address_only(settings: Any, port: int) -> None:
    settings.SF_NET_TEST_HOSTS = {"hooks.sf.test": "127.0.0.1"}
    with guarded_client(timeout=5) as client:
        with pytest.raises(httpx.ConnectError, match=r"hooks\.sf\.test is a loopback address"):
            client.get(f"http://hooks.sf.test:{port}/")
        with pytest.raises(httpx.ConnectError, match="loopback"):
            client.get(f"http://[::ffff:127.0.0.1]:{port}/")
        settings.SF_NET_ALLOW_HOSTS = ["hooks.sf.test"]
        # The name resolves (through the test map) to the listener, never by DNS.
        assert client.get(f"http://hooks.sf.test:{port}/").status_code == 204
