#!/usr/bin/env python3
"""The load test's upstream: item bodies with a fixed size and cache policy, and faults on a
fixed schedule, on 127.0.0.1.

GET /item/<n> answers 200 with a body of size(n) bytes (its length in 8 digits, then b"x"s, so
that a body cut short is seen by whoever reads it), and a Cache-Control
by n % 4: none, max-age=60, no-store, max-age=2. Every request counts; by the count k (from 1):
  k % 40 == 7:  the connection is reset before anything is sent;
  k % 40 == 17: 503 with Retry-After: 0;
  k % 40 == 27: the answer comes after 200 ms;
  k % 40 == 37: the headers promise size(n) bytes, half are sent, and the connection closes.
GET /stats answers the counts as JSON: requests, faults by kind, and the most requests it was
serving at once (what the proxy's bound on upstream requests must keep low).

Usage: fault-upstream.py PORT
"""
import json
import socket
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

lock = threading.Lock()
stats = {"requests": 0, "serving": 0, "most_serving": 0, "reset": 0, "unavailable": 0, "slow": 0, "cut": 0}


def size(n):
    """The body size of item n: 512 bytes to 4.5 KB, fixed per item."""
    return 512 + (n * 7919) % 4096


CACHE_CONTROL = [None, "max-age=60", "no-store", "max-age=2"]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        if self.path == "/stats":
            with lock:
                body = json.dumps(stats).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        parts = self.path.split("/")
        if len(parts) != 3 or parts[1] != "item" or not parts[2].isdigit():
            self.send_error(404)
            return
        n = int(parts[2])
        with lock:
            stats["requests"] += 1
            k = stats["requests"]
            stats["serving"] += 1
            stats["most_serving"] = max(stats["most_serving"], stats["serving"])
        try:
            self.answer(n, k)
        finally:
            with lock:
                stats["serving"] -= 1

    def answer(self, n, k):
        fault = k % 40
        if fault == 7:
            with lock:
                stats["reset"] += 1
            # SO_LINGER with a zero timeout: close() sends a reset.
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.close_connection = True
            self.connection.close()
            return
        if fault == 17:
            with lock:
                stats["unavailable"] += 1
            self.send_response(503)
            self.send_header("Retry-After", "0")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if fault == 27:
            with lock:
                stats["slow"] += 1
            time.sleep(0.2)
        body = b"%08d" % size(n) + b"x" * (size(n) - 8)
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(body)))
        cache_control = CACHE_CONTROL[n % 4]
        if cache_control:
            self.send_header("Cache-Control", cache_control)
        self.end_headers()
        if fault == 37:
            with lock:
                stats["cut"] += 1
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        self.wfile.write(body)


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024

    def handle_error(self, request, client_address):
        # A client that resets or closes its connection (the proxy cancelling an attempt, wrk
        # ending) is part of the test, not an error to print.
        if not isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            super().handle_error(request, client_address)


if __name__ == "__main__":
    Server(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
