#!/usr/bin/env python3
"""A small HTTP server of the tests: static files with Range, ETag and
Last-Modified, or a proxy in front of another server (an S3 server), with faults
injected on demand.

    range_server.py ROOT [--no-etag] [--ignore-range] [--html-404]
    range_server.py --upstream http://127.0.0.1:PORT

It listens on 127.0.0.1, on a free port that it prints as `PORT <n>` on stdout,
and stops by itself after --lifetime seconds (default 600) so that a test that
dies never leaves it behind. Standard library only.

Control (not counted in the log):
    GET  /__ctl/log           the requests so far, as JSON: [[method, path, range], ...]
    GET  /__ctl/bytes         the body bytes sent so far, as JSON
    POST /__ctl/reset         forget the log and the fault rules
    POST /__ctl/rules         JSON list of fault rules, applied in order, each:
        {"match": "shard-00000",   substring of the path (default: every path)
         "kind": "status" | "reset" | "truncate" | "slow" | "replace" | "ignore-range" | "html",
         "count": 2,               how many matching requests it applies to (default 1)
         "skip": 0,                matching requests to let through first
         "status": 503,            for "status"
         "delay": 3.0,             seconds, for "slow" (before the response)
         "with": "/path/file"}     for "replace": after serving the request, the file is
                                   replaced by this one (its ETag and size change)
"""

import argparse
import email.utils
import hashlib
import http.client
import json
import os
import shutil
import socket
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()
LOG = []
RULES = []
SENT = [0]


def take_rule(path):
    """The first rule that applies to this request, consuming one use of it."""
    with LOCK:
        for r in RULES:
            if r.get("count", 1) <= 0:
                continue
            if r.get("match", "") not in path:
                continue
            if r.get("skip", 0) > 0:
                r["skip"] -= 1
                continue
            r["count"] = r.get("count", 1) - 1
            return dict(r)
    return None


def parse_range(header, size):
    """(start, end) inclusive for a single `bytes=` range, None when absent or
    not a single range, 'unsatisfiable' when it starts past the end."""
    if not header or not header.startswith("bytes="):
        return None
    spec = header[len("bytes="):].strip()
    if "," in spec:
        return None
    a, _, b = spec.partition("-")
    try:
        if a == "":
            n = int(b)
            if n == 0:
                return "unsatisfiable"
            return (max(0, size - n), size - 1)
        start = int(a)
        end = int(b) if b else size - 1
    except ValueError:
        return None
    if start >= size or end < start:
        return "unsatisfiable"
    return (start, min(end, size - 1))


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "range-server"

    def log_message(self, *args):
        pass

    # --------------------------------------------------------------- control
    def control(self):
        global RULES
        body = b""
        n = int(self.headers.get("Content-Length") or 0)
        if n:
            body = self.rfile.read(n)
        if self.path == "/__ctl/log":
            with LOCK:
                out = json.dumps(LOG).encode()
        elif self.path == "/__ctl/bytes":
            with LOCK:
                out = json.dumps(SENT[0]).encode()
        elif self.path == "/__ctl/reset":
            with LOCK:
                LOG.clear()
                RULES = []
                SENT[0] = 0
            out = b"{}"
        elif self.path == "/__ctl/rules":
            rules = json.loads(body or b"[]")
            with LOCK:
                RULES = rules
            out = b"{}"
        else:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    # --------------------------------------------------------------- requests
    def do_GET(self):
        self.handle_request(head=False)

    def do_HEAD(self):
        self.handle_request(head=True)

    def do_POST(self):
        if self.path.startswith("/__ctl/"):
            return self.control()
        self.handle_request(head=False)

    def do_PUT(self):
        self.handle_request(head=False)

    def handle_request(self, head):
        if self.path.startswith("/__ctl/"):
            return self.control()
        path = urllib.parse.urlsplit(self.path).path
        with LOCK:
            LOG.append([self.command, path, self.headers.get("Range")])
        rule = take_rule(path)
        kind = rule and rule.get("kind")
        if kind == "slow":
            time.sleep(float(rule.get("delay", 3)))
        if kind == "status":
            return self.plain(int(rule.get("status", 503)), b"injected failure\n")
        if kind == "reset":
            self.reset()
            return
        if self.server.upstream:
            return self.proxy(head, rule)
        return self.serve_file(path, head, rule)

    def reset(self):
        """Close the connection abruptly (RST)."""
        try:
            self.connection.setsockopt(
                socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00"
            )
        except OSError:
            pass
        self.close_connection = True
        try:
            self.connection.close()
        except OSError:
            pass

    def plain(self, status, body, ctype="text/plain", extra=()):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def send_body(self, status, headers, body, rule):
        kind = rule and rule.get("kind")
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command == "HEAD":
            return
        if kind == "truncate":
            # Half the body, then the connection ends.
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            with LOCK:
                SENT[0] += len(body) // 2
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        # In pieces, counting what the client took (one that hangs up early has
        # not received the rest).
        for at in range(0, len(body), 1 << 20):
            piece = body[at : at + (1 << 20)]
            self.wfile.write(piece)
            with LOCK:
                SENT[0] += len(piece)

    # --------------------------------------------------------------- files
    def serve_file(self, path, head, rule):
        opts = self.server.opts
        rel = urllib.parse.unquote(path).lstrip("/")
        full = os.path.realpath(os.path.join(self.server.root, rel))
        if not full.startswith(self.server.root + os.sep) or not os.path.isfile(full):
            if opts.html_404 or (rule and rule.get("kind") == "html"):
                page = b"<!DOCTYPE html><html><body><h1>Not Found</h1></body></html>\n"
                return self.plain(200, page, "text/html")
            return self.plain(404, b"not found\n")
        if rule and rule.get("kind") == "html":
            page = b"<!DOCTYPE html><html><body><h1>Service error</h1></body></html>\n"
            return self.plain(200, page, "text/html")
        f = open(full, "rb")
        st = os.fstat(f.fileno())
        size = st.st_size
        etag = '"%s"' % hashlib.sha1(
            ("%d-%d-%d" % (st.st_ino, st.st_size, st.st_mtime_ns)).encode()
        ).hexdigest()[:16]
        last_modified = email.utils.formatdate(st.st_mtime, usegmt=True)
        headers = [("Content-Type", "application/octet-stream"), ("Accept-Ranges", "bytes")]
        if not opts.no_etag:
            headers.append(("ETag", etag))
        headers.append(("Last-Modified", last_modified))
        if_match = self.headers.get("If-Match")
        if if_match and not opts.no_etag and if_match.strip() not in ("*", etag):
            return self.plain(412, b"precondition failed\n")
        ius = self.headers.get("If-Unmodified-Since")
        if ius:
            try:
                t = email.utils.parsedate_to_datetime(ius).timestamp()
                if int(st.st_mtime) > int(t):
                    return self.plain(412, b"precondition failed\n")
            except (TypeError, ValueError):
                pass
        ignore = opts.ignore_range or (rule and rule.get("kind") == "ignore-range")
        rng = None if ignore else parse_range(self.headers.get("Range"), size)
        with f:
            if rng == "unsatisfiable":
                return self.plain(416, b"", extra=[("Content-Range", "bytes */%d" % size)])
            if rng is None:
                self.send_body(200, headers, f.read(), rule)
            else:
                a, b = rng
                f.seek(a)
                headers.append(("Content-Range", "bytes %d-%d/%d" % (a, b, size)))
                self.send_body(206, headers, f.read(b + 1 - a), rule)
        if rule and rule.get("kind") == "replace":
            tmp = full + ".replacing"
            shutil.copyfile(rule["with"], tmp)
            os.replace(tmp, full)

    # --------------------------------------------------------------- proxy
    def proxy(self, head, rule):
        u = self.server.upstream
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else None
        conn = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
        headers = {k: v for k, v in self.headers.items() if k.lower() != "connection"}
        try:
            conn.request(self.command, self.path, body=body, headers=headers)
            resp = conn.getresponse()
            data = resp.read()
        except OSError as e:
            return self.plain(502, ("upstream: %s\n" % e).encode())
        finally:
            conn.close()
        skip = {"content-length", "transfer-encoding", "connection", "keep-alive"}
        out = [(k, v) for k, v in resp.getheaders() if k.lower() not in skip]
        if rule and rule.get("kind") == "ignore-range" and resp.status == 206:
            # Ask again without the Range header: the whole object, status 200.
            conn = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
            headers.pop("Range", None)
            conn.request(self.command, self.path, headers=headers)
            resp = conn.getresponse()
            data = resp.read()
            conn.close()
            out = [(k, v) for k, v in resp.getheaders() if k.lower() not in skip]
        self.send_body(resp.status, out, data, rule)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("root", nargs="?")
    ap.add_argument("--upstream")
    ap.add_argument("--no-etag", action="store_true")
    ap.add_argument("--ignore-range", action="store_true")
    ap.add_argument("--html-404", action="store_true")
    ap.add_argument("--lifetime", type=float, default=600)
    opts = ap.parse_args()
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    srv.opts = opts
    srv.root = os.path.realpath(opts.root) if opts.root else None
    srv.upstream = urllib.parse.urlsplit(opts.upstream) if opts.upstream else None
    print("PORT %d" % srv.server_address[1], flush=True)
    threading.Timer(opts.lifetime, lambda: os._exit(0)).start()
    srv.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
