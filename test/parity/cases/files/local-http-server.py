"""A loopback HTTP server for the local-* parity cases (uri, get_url, wait_for).

usage: local-http-server.py DIR  -- serves DIR, writes the port to DIR/port (atomically), and
answers: /json (JSON), /redirect (302 to /json), /status/404, /echo (POST: the body and its
content type back as JSON), /auth (basic auth u:parity-pw, else 401), /quit (stops). Stops by
itself after 120 s in any case.
"""
import base64
import json
import os
import sys
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

root = sys.argv[1]


class Handler(SimpleHTTPRequestHandler):
    def __init__(self, *a, **kw):
        super().__init__(*a, directory=root, **kw)

    def log_message(self, *a):
        pass

    def send_json(self, code, doc, extra=None):
        body = json.dumps(doc).encode()
        self.send_response(code)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(body)))
        self.send_header('Set-Cookie', 'session=abc; Path=/')
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path == '/json':
            return self.send_json(200, {'name': 'parity', 'items': [1, 2, 3]})
        if self.path == '/redirect':
            self.send_response(302)
            self.send_header('Location', '/json')
            self.send_header('Content-Length', '0')
            self.end_headers()
            return
        if self.path == '/status/404':
            return self.send_json(404, {'error': 'not here'})
        if self.path == '/auth':
            want = 'Basic ' + base64.b64encode(b'u:parity-pw').decode()
            if self.headers.get('Authorization') != want:
                return self.send_json(401, {'error': 'auth'}, {'WWW-Authenticate': 'Basic realm="parity"'})
            return self.send_json(200, {'user': 'u'})
        if self.path == '/quit':
            self.send_json(200, {'bye': True})
            threading.Thread(target=self.server.shutdown).start()
            return
        return super().do_GET()

    def do_POST(self):
        n = int(self.headers.get('Content-Length') or 0)
        data = self.rfile.read(n).decode()
        return self.send_json(200, {'body': data, 'type': self.headers.get('Content-Type'), 'method': 'POST'})


server = ThreadingHTTPServer(('127.0.0.1', 0), Handler)
tmp = os.path.join(root, '.port.tmp')
with open(tmp, 'w') as f:
    f.write('%d\n' % server.server_address[1])
os.rename(tmp, os.path.join(root, 'port'))
threading.Timer(120, server.shutdown).start()
server.serve_forever()
os._exit(0)
