"""Other web pages cannot drive the app: a forged ``Host`` (DNS rebinding) or a websocket from
another site's page is refused with 403, in raw requests and in a real browser; the copy box
makes folders only where the user works; a forged input leaves the session alive.

The browser case serves a page of its own on another loopback port (another origin) that opens
a websocket to the app, as a page of any site open in the user's browser could; the app's own
page, opened from the app's address, still connects.
"""

from __future__ import annotations

import base64
import http.client
import http.server
import os
import threading
from pathlib import Path

import pytest
from test_app import CHROMIUM, CHROMIUM_FLAGS, free_port, playwright_api, start_app, stop

from procure.interfaces.guard import SameOrigin, served_names


@pytest.fixture(scope="module")
def app():
    proc, url = start_app()
    yield proc, int(url.rsplit(":", 1)[1])
    stop(proc)


def _get(port: int, path: str, headers: dict[str, str]) -> tuple[int, str]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.putrequest("GET", path, skip_host=True, skip_accept_encoding=True)
    for k, v in headers.items():
        conn.putheader(k, v)
    conn.endheaders()
    response = conn.getresponse()
    body = response.read(2000).decode("utf-8", "replace")
    conn.close()
    return response.status, body


def _handshake(port: int, origin: str | None, host: str | None = None) -> int:
    key = base64.b64encode(os.urandom(16)).decode()
    headers = {"Host": host or f"127.0.0.1:{port}", "Upgrade": "websocket", "Connection": "Upgrade",
               "Sec-WebSocket-Key": key, "Sec-WebSocket-Version": "13"}  # fmt: skip
    if origin is not None:
        headers["Origin"] = origin
    return _get(port, "/websocket/", headers)[0]


def test_a_forged_host_is_refused_and_the_apps_own_is_served(app):
    # before: GET / with Host: evil.example.com was served (a rebound name reaches the app)
    _proc, port = app
    status, body = _get(port, "/", {"Host": "evil.example.com"})
    assert status == 403 and body == "procure app: refused: Host 'evil.example.com' is not this app's address\n"
    assert _get(port, "/", {"Host": f"evil.example.com:{port}"})[0] == 403
    assert _get(port, "/", {"Host": f"127.0.0.1:{port + 1}"})[0] == 403
    assert _get(port, "/", {"Host": f"127.0.0.1:{port}"})[0] == 200
    assert _get(port, "/", {"Host": f"localhost:{port}"})[0] == 200


def test_a_websocket_from_another_site_is_refused_before_its_handshake(app):
    # before: a websocket opened with Origin: http://evil.example.com was accepted, and its Save
    # changed the ledger
    _proc, port = app
    assert _handshake(port, "http://evil.example.com") == 403
    assert _handshake(port, f"http://127.0.0.1:{port + 1}") == 403  # another port is another origin
    assert _handshake(port, "null") == 403  # a sandboxed page or a file
    assert _handshake(port, f"http://127.0.0.1:{port}", host="evil.example.com") == 403
    assert _handshake(port, f"http://127.0.0.1:{port}") == 101
    assert _handshake(port, f"http://localhost:{port}", host=f"localhost:{port}") == 101


class _Page(http.server.BaseHTTPRequestHandler):
    page = b""

    def do_GET(self) -> None:  # the handler's name in http.server
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(self.page)))
        self.end_headers()
        self.wfile.write(self.page)

    def log_message(self, *args: object) -> None:
        pass


def test_a_page_of_another_origin_in_the_browser_cannot_open_the_apps_websocket(app):
    if CHROMIUM is None:
        pytest.skip("no Chromium on this machine (apt-get install chromium)")
    _proc, port = app
    script = (
        "<script>window.result = new Promise(done => {"
        f" const ws = new WebSocket('ws://127.0.0.1:{port}/websocket/');"
        " ws.onopen = () => done('open'); ws.onerror = () => done('refused');"
        " setTimeout(() => done('timeout'), 20000); });</script>"
    )
    _Page.page = script.encode()
    other = http.server.HTTPServer(("127.0.0.1", free_port()), _Page)
    threading.Thread(target=other.serve_forever, daemon=True).start()
    try:
        with playwright_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
            page = browser.new_page()
            page.goto(f"http://127.0.0.1:{other.server_address[1]}/")
            assert page.evaluate("window.result") == "refused"
            own = browser.new_page()  # the app's own page, from its own address, connects
            own.goto(f"http://127.0.0.1:{port}/")
            assert (
                own.evaluate(
                    "new Promise(done => { const ws = new WebSocket(`ws://${location.host}/websocket/`);"
                    " ws.onopen = () => done('open'); ws.onerror = () => done('refused'); })"
                )
                == "open"
            )
            browser.close()
    finally:
        other.shutdown()


@pytest.mark.parametrize(
    ("listen", "host", "origin", "allowed"),
    [
        ("127.0.0.1", "127.0.0.1:8000", None, True),
        ("127.0.0.1", "localhost:8000", "http://localhost:8000", True),
        ("127.0.0.1", "[::1]:8000", "http://[::1]:8000", True),
        ("127.0.0.1", "attacker.test:8000", None, False),
        ("127.0.0.1", "127.0.0.1:8000", "https://attacker.test", False),
        ("127.0.0.1", "127.0.0.1:8000", "http://127.0.0.1:9000", False),
        ("0.0.0.0", "192.168.1.20:8000", "http://192.168.1.20:8000", True),  # every interface: an IP
        ("0.0.0.0", "rebound.test:8000", None, False),  # but not another site's name
        ("0.0.0.0", "192.168.1.20:8000", "http://192.168.1.99:8000", False),  # another machine's page
        ("127.0.0.1", "127.0.0.1", None, False),  # no port: port 80, not the served one
        ("127.0.0.1", "127.0.0.1:8000", "http://127.0.0.1", False),
        ("10.1.2.3", "10.1.2.3:8000", None, True),
        ("10.1.2.3", "localhost:8000", None, False),  # not served on loopback
    ],
)
def test_which_host_and_origin_are_the_apps(listen, host, origin, allowed):
    guard = SameOrigin(lambda *_: None, listen, 8000)  # type: ignore[arg-type, return-value]
    headers = [(b"host", host.encode())] + ([(b"origin", origin.encode())] if origin else [])
    assert (guard.refusal({"type": "http", "headers": headers}) == "") is allowed
    assert "localhost" in served_names("127.0.0.1") and "localhost" not in served_names("10.1.2.3")


def test_the_copy_box_makes_folders_only_under_the_apps_folder_or_home(tmp_path, monkeypatch):
    from procure.interfaces.pages.held import copy_target
    from procure.interfaces.pages.parts import Refused

    work, home, elsewhere = tmp_path / "work", tmp_path / "home", tmp_path / "elsewhere"
    for d in (work, home, elsewhere):
        d.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("HOME", str(home))
    assert copy_target("mine") == Path("mine")  # under the current folder
    assert copy_target("~/ledgers/mine") == home / "ledgers" / "mine"  # under the home
    assert copy_target(str(elsewhere)) == elsewhere  # exists and is empty
    (elsewhere / "x").write_text("")
    for refused in ("/etc/procure-x", str(elsewhere), str(elsewhere / "new"), "../elsewhere/new"):
        with pytest.raises(Refused, match="is outside this folder"):
            copy_target(refused)
    (work / "out").symlink_to(elsewhere)  # a link out of the folder is followed
    with pytest.raises(Refused, match="is outside this folder"):
        copy_target("out/new")


@pytest.mark.parametrize("forged", ["'x'", "[1]", "{}", "null", "1e400"])
def test_a_forged_slider_value_leaves_the_session_alive(app, forged):
    # before: budget_slider = 'x', [1] or {} raised in the Plan page and dropped the session
    if CHROMIUM is None:
        pytest.skip("no Chromium on this machine (apt-get install chromium)")
    from test_app import open_page, wait_text

    _proc, port = app
    with playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        page = open_page(browser, f"http://127.0.0.1:{port}", tab="Plan")
        before = page.inner_text("#spent_usd")
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if "disconnect" in m.text.lower() else None)
        page.evaluate(f"Shiny.setInputValue('budget_slider', {forged}, {{priority: 'event'}})")
        page.evaluate("Shiny.setInputValue('budget', 250000, {priority: 'event'})")
        # the session still answers: the plan follows the box, and the slider is put back
        wait_text(page, "spent_usd", lambda t: t != before and any(c.isdigit() for c in t))
        assert page.evaluate("document.querySelector('#shiny-disconnected-overlay') === null")
        assert not errors
        browser.close()


def _save_over_websocket(port: int, origin: str) -> str:
    """What a script does with the app's websocket: open a session, set the twin's held hours to
    40, press Save; returns the page's save message."""
    import json

    from websockets.sync.client import connect

    from procure.interfaces.pages.held import COLUMN, editable
    from procure.ledger import load_ledger

    ledger = load_ledger(None)
    held = dict(zip(ledger.sources["source"], ledger.sources[COLUMN], strict=True))
    inputs = {f"held_{i}:shiny.number": float(held[name]) for i, name in enumerate(editable(ledger))}
    inputs |= {"budget:shiny.number": 100000, "save:shiny.action": 0}
    inputs[".clientdata_output_save_message_hidden"] = False  # a browser says which outputs it shows
    url = f"ws://127.0.0.1:{port}/websocket/"
    with connect(url, origin=origin, proxy=None, compression=None, open_timeout=30) as ws:
        ws.send(json.dumps({"method": "init", "data": inputs}))
        ws.send(json.dumps({"method": "update", "data": {"held_1:shiny.number": 40}}))
        ws.send(json.dumps({"method": "update", "data": {"save:shiny.action": 1}}))
        while True:
            said = json.loads(ws.recv(timeout=60)).get("values", {}).get("save_message", "")
            if said and said != "Saving …":
                return str(said)


def test_a_websocket_of_another_site_cannot_save_and_the_apps_own_can(ledger_copy):
    # before: a script's websocket with Origin: http://evil.example.com was accepted and its
    # Save changed the ledger
    from websockets.exceptions import InvalidStatus

    proc, url = start_app(ledger_copy)
    port = int(url.rsplit(":", 1)[1])
    sources = ledger_copy / "sources.csv"
    before = sources.read_bytes()
    try:
        for origin in ("http://evil.example.com", f"http://127.0.0.1:{port + 1}", "null"):
            with pytest.raises(InvalidStatus) as refused:
                _save_over_websocket(port, origin)
            assert refused.value.response.status_code == 403
        assert sources.read_bytes() == before
        # the same script from the app's own page saves: what was refused above is the origin
        assert _save_over_websocket(port, f"http://127.0.0.1:{port}").startswith("Saved")
        assert sources.read_bytes() != before
    finally:
        stop(proc)
