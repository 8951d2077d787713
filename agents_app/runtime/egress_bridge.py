"""The bridge inside the sandbox: ``127.0.0.1:PORT`` of the sandbox's own loopback,
relayed to SF's egress proxy on a Unix socket bound into the sandbox.

Run by the host's python inside bubblewrap, standard library only, before the
command: it listens first, then forks the command, so the proxy address answers from
the command's first instruction; it relays until the command exits and exits with
its status (128 + the signal, as a shell does, when a signal ended it).

    python3 -I -S egress_bridge.py 127.0.0.1 3128 /run/sf-egress/proxy.sock -- bash -c CMD
"""

import contextlib
import os
import socket
import sys
import threading

CHUNK = 65536


def _pipe(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(CHUNK):
            sink.sendall(data)
    except OSError:
        pass
    finally:
        for end, how in ((sink, socket.SHUT_WR), (source, socket.SHUT_RD)):
            with contextlib.suppress(OSError):
                end.shutdown(how)


def _relay(client: socket.socket, target: str) -> None:
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        upstream.connect(target)
    except OSError:
        client.close()
        upstream.close()
        return
    back = threading.Thread(target=_pipe, args=(upstream, client), daemon=True)
    back.start()
    _pipe(client, upstream)
    back.join()
    client.close()
    upstream.close()


def _serve(listener: socket.socket, target: str) -> None:
    while True:
        client, _ = listener.accept()
        threading.Thread(target=_relay, args=(client, target), daemon=True).start()


def main(argv: list[str]) -> int:
    host, port, target, separator, *command = argv
    if separator != "--" or not command:
        print("egress bridge: usage: HOST PORT SOCKET -- COMMAND…", file=sys.stderr)
        return 2
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((host, int(port)))
    listener.listen(128)
    child = os.fork()
    if child == 0:
        listener.close()
        try:
            os.execvp(command[0], command)
        except OSError as exc:
            print(f"egress bridge: {command[0]}: {exc}", file=sys.stderr)
        os._exit(127)
    threading.Thread(target=_serve, args=(listener, target), daemon=True).start()
    _, status = os.waitpid(child, 0)
    code = os.waitstatus_to_exitcode(status)
    return 128 - code if code < 0 else code


if __name__ == "__main__":
    sys.stdout.flush()
    os._exit(main(sys.argv[1:]))
